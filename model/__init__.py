"""Protocol models checked by kmc.

model/ owns protocol state and actions only; it never imports checker/.
The engine sees a model only through the protocol in model.base.
"""

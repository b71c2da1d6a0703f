"""Named properties (invariants and `sometimes` witnesses) over one state of a model.

invariants/ imports only the types of model/; the engine reaches properties
through invariants.registry.properties_for(model).
"""

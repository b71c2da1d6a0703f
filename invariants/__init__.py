"""Named properties (invariants and `sometimes` witnesses) over one state of a model.

invariants/ imports only the types of model/; a model's ModelDef names its
property functions ("invariants.<name>:<function>") and the engine reaches
them through checker.search.registry.properties_for(model).
"""

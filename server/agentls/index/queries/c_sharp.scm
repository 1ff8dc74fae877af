; C# definitions. Conventions: see python.scm.

(namespace_declaration name: (_) @name) @def.namespace
(file_scoped_namespace_declaration name: (_) @name) @def.namespace
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(struct_declaration name: (identifier) @name) @def.struct
(enum_declaration name: (identifier) @name) @def.enum
(enum_member_declaration name: (identifier) @name) @def.enum_member
(delegate_declaration name: (identifier) @name) @def.type
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.constructor
(destructor_declaration name: (identifier) @name) @def.method
(operator_declaration operator: _ @name) @def.method
(property_declaration name: (identifier) @name) @def.property
(indexer_declaration "this" @name) @def.property
(event_declaration name: (identifier) @name) @def.event
(event_field_declaration (variable_declaration (variable_declarator name: (identifier) @name) @def.event))
(field_declaration
  (modifier) @_mod
  (variable_declaration (variable_declarator name: (identifier) @name) @def.constant)
  (#eq? @_mod "const"))
(field_declaration (variable_declaration (variable_declarator name: (identifier) @name) @def.field))

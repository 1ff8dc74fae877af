; TypeScript/TSX additions to ecmascript.scm. Conventions: see python.scm.

(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(type_alias_declaration name: (_) @name) @def.type
(enum_declaration name: (_) @name) @def.enum
(enum_body name: (property_identifier) @name @def.enum_member)
(enum_body (enum_assignment name: (property_identifier) @name) @def.enum_member)
(internal_module name: (_) @name) @def.namespace
(module name: (_) @name) @def.namespace
(function_signature name: (identifier) @name) @def.function
(method_signature name: (_) @name) @def.method
(abstract_method_signature name: (_) @name) @def.method
(public_field_definition name: (_) @name) @def.property
(property_signature name: (_) @name) @def.property

; Variables exported from a namespace body.
(internal_module body: (statement_block (export_statement declaration: (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @def.constant))))
(internal_module body: (statement_block (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable))))
(program (ambient_declaration (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(program (ambient_declaration (variable_declaration (variable_declarator name: (identifier) @name) @def.variable)))

(ambient_declaration (_) @wrapped) @wrapper

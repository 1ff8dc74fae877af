; PHP definitions. Conventions: see python.scm.

(namespace_definition name: (namespace_name) @name) @def.namespace
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(trait_declaration name: (name) @name) @def.trait
(enum_declaration name: (name) @name) @def.enum
(enum_case name: (name) @name) @def.enum_member
(function_definition name: (name) @name) @def.function
(method_declaration name: (name) @name) @def.method
(property_declaration (property_element name: (variable_name (name) @name)) @def.property)
(const_declaration (const_element (name) @name) @def.constant)

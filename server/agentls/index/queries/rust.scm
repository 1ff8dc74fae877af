; Rust definitions. Conventions: see python.scm. `@trait` names the trait of an impl block.

(impl_item trait: (_)? @trait type: (_) @name) @def.impl
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(union_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(enum_variant name: (identifier) @name) @def.enum_member
(trait_item name: (type_identifier) @name) @def.trait
(mod_item name: (identifier) @name) @def.module
(macro_definition name: (identifier) @name) @def.macro
(type_item name: (type_identifier) @name) @def.type
(associated_type name: (type_identifier) @name) @def.type
(const_item name: (identifier) @name) @def.constant
(static_item name: (identifier) @name) @def.variable
(field_declaration_list (field_declaration name: (field_identifier) @name) @def.field)

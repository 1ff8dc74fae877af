; C definitions. Conventions: see python.scm. Prototypes are not definitions.

(function_definition declarator: (function_declarator declarator: (identifier) @name)) @def.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @def.function
(function_definition declarator: (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))) @def.function

(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @def.enum
(enumerator name: (identifier) @name) @def.enum_member
(type_definition declarator: (type_identifier) @name) @def.type
(type_definition declarator: (pointer_declarator declarator: (type_identifier) @name)) @def.type
(field_declaration_list (field_declaration declarator: (field_identifier) @name) @def.field)
(field_declaration_list (field_declaration declarator: (pointer_declarator declarator: (field_identifier) @name)) @def.field)
(field_declaration_list (field_declaration declarator: (array_declarator declarator: (field_identifier) @name)) @def.field)

(preproc_def name: (identifier) @name) @def.macro
(preproc_function_def name: (identifier) @name) @def.macro

(translation_unit (declaration declarator: (identifier) @name) @def.variable)
(translation_unit (declaration declarator: (init_declarator declarator: (identifier) @name)) @def.variable)
(translation_unit (declaration declarator: (pointer_declarator declarator: (identifier) @name)) @def.variable)
(translation_unit (declaration declarator: (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))) @def.variable)
(translation_unit (declaration declarator: (array_declarator declarator: (identifier) @name)) @def.variable)
(translation_unit (declaration declarator: (init_declarator declarator: (array_declarator declarator: (identifier) @name))) @def.variable)

; C++ definitions. Conventions: see python.scm. `A::f` definitions get their scope from the
; qualified name (extract.py splits it); prototypes at namespace level are not definitions.

(function_definition declarator: (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name) (qualified_identifier)] @name)) @def.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier) (operator_name) (qualified_identifier)] @name))) @def.function
(function_definition declarator: (reference_declarator (function_declarator declarator: [(identifier) (field_identifier) (operator_name) (qualified_identifier)] @name))) @def.function

; Member declarations inside a class body.
(field_declaration_list (field_declaration declarator: (function_declarator declarator: [(field_identifier) (operator_name) (destructor_name)] @name)) @def.method)
(field_declaration_list (field_declaration declarator: (pointer_declarator declarator: (function_declarator declarator: [(field_identifier) (operator_name)] @name))) @def.method)
(field_declaration_list (field_declaration declarator: (reference_declarator (function_declarator declarator: [(field_identifier) (operator_name)] @name))) @def.method)
(field_declaration_list (declaration declarator: (function_declarator declarator: [(identifier) (destructor_name)] @name)) @def.method)
(field_declaration_list (field_declaration declarator: (field_identifier) @name) @def.field)
(field_declaration_list (field_declaration declarator: (pointer_declarator declarator: (field_identifier) @name)) @def.field)
(field_declaration_list (field_declaration declarator: (array_declarator declarator: (field_identifier) @name)) @def.field)

(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @def.enum
(enumerator name: (identifier) @name) @def.enum_member
(namespace_definition name: [(namespace_identifier) (nested_namespace_specifier)] @name) @def.namespace
(type_definition declarator: (type_identifier) @name) @def.type
(alias_declaration name: (type_identifier) @name) @def.type
(concept_definition name: (identifier) @name) @def.type

(preproc_def name: (identifier) @name) @def.macro
(preproc_function_def name: (identifier) @name) @def.macro

(translation_unit (declaration declarator: (init_declarator declarator: (identifier) @name)) @def.variable)
(translation_unit (declaration declarator: (identifier) @name) @def.variable)
(declaration_list (declaration declarator: (init_declarator declarator: (identifier) @name)) @def.variable)

(template_declaration (_) @wrapped) @wrapper

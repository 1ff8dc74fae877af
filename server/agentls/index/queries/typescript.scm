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

(program (ambient_declaration (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(program (ambient_declaration (variable_declaration (variable_declarator name: (identifier) @name) @def.variable)))

; Variables declared in a namespace, an ambient module (`declare module "os" {...}`) or
; `declare global {...}`, exported or not: `const ECONNRESET: number;` in os.d.ts.
(internal_module body: (statement_block (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @def.constant)))
(internal_module body: (statement_block (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(internal_module body: (statement_block (variable_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(internal_module body: (statement_block (export_statement declaration: (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @def.constant))))
(internal_module body: (statement_block (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable))))
(internal_module body: (statement_block (export_statement declaration: (variable_declaration (variable_declarator name: (identifier) @name) @def.variable))))
(module body: (statement_block (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @def.constant)))
(module body: (statement_block (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(module body: (statement_block (variable_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(module body: (statement_block (export_statement declaration: (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @def.constant))))
(module body: (statement_block (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable))))
(module body: (statement_block (export_statement declaration: (variable_declaration (variable_declarator name: (identifier) @name) @def.variable))))
(ambient_declaration (statement_block (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @def.constant)))
(ambient_declaration (statement_block (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(ambient_declaration (statement_block (variable_declaration (variable_declarator name: (identifier) @name) @def.variable)))

; Construct signatures of interfaces and type literals: `new (size: number): Buffer;`.
(construct_signature "new" @name) @def.constructor

(ambient_declaration (_) @wrapped) @wrapper

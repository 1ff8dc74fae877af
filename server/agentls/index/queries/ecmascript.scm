; Definitions shared by JavaScript, TypeScript and TSX. Conventions: see python.scm.

(class_declaration name: (_) @name) @def.class
(class name: (_) @name) @def.class
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
; Object-literal methods are not symbols: only class members.
(class_body (method_definition name: (_) @name) @def.method)

; `const f = () => ...` and `const f = function () {}` anywhere (nested functions count).
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @def.function
(variable_declarator name: (identifier) @name value: (class)) @def.class

; `exports.f = function () {}`, `Foo.prototype.bar = () => {}`
(expression_statement
  (assignment_expression
    left: (member_expression property: (property_identifier) @name)
    right: [(arrow_function) (function_expression)]) @def.function)

; Top-level variables only: locals are not symbols.
(program (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @def.constant))
(program (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable))
(program (variable_declaration (variable_declarator name: (identifier) @name) @def.variable))
(program (export_statement declaration: (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @def.constant)))
(program (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(program (export_statement declaration: (variable_declaration (variable_declarator name: (identifier) @name) @def.variable)))

; Top-level blocks and the bodies of top-level `if`/`else`/`try` (not functions) hold
; module-level variables too: `if (typeof window !== 'undefined') { const API = ... }`.
(program (statement_block (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @def.constant)))
(program (statement_block (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(program (statement_block (variable_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(program (if_statement consequence: (statement_block (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @def.constant))))
(program (if_statement consequence: (statement_block (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable))))
(program (if_statement consequence: (statement_block (variable_declaration (variable_declarator name: (identifier) @name) @def.variable))))
(program (if_statement alternative: (else_clause (statement_block (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @def.constant)))))
(program (if_statement alternative: (else_clause (statement_block (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable)))))
(program (if_statement alternative: (else_clause (statement_block (variable_declaration (variable_declarator name: (identifier) @name) @def.variable)))))
(program (try_statement body: (statement_block (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @def.constant))))
(program (try_statement body: (statement_block (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable))))
(program (try_statement body: (statement_block (variable_declaration (variable_declarator name: (identifier) @name) @def.variable))))

(export_statement declaration: (_) @wrapped) @wrapper

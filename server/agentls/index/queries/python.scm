; Python definitions. Capture conventions (see ../extract.py):
;   @name        the defined identifier (the selection range)
;   @def.<kind>  the whole definition (the full range); <kind> is a SymbolKind value
;   @scope       an explicit container written at the definition site (Go receivers, C++ A::f)
; A pattern capturing `@wrapper` and `@wrapped` instead says that a node (decorators,
; `export`, `template <...>`) belongs to the full range of the definition it wraps.
; Earlier patterns win when two patterns capture the same name.

(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function

; Module- and class-level assignments only: locals are not symbols.
(module (expression_statement (assignment left: (identifier) @name) @def.variable))
(module (if_statement consequence: (block (expression_statement (assignment left: (identifier) @name) @def.variable))))
(module (try_statement body: (block (expression_statement (assignment left: (identifier) @name) @def.variable))))
(class_definition body: (block (expression_statement (assignment left: (identifier) @name) @def.field)))
; The other branches of module-level if/try (`except ImportError: x = None` fallbacks).
(module (if_statement alternative: (elif_clause consequence: (block (expression_statement (assignment left: (identifier) @name) @def.variable)))))
(module (if_statement alternative: (else_clause body: (block (expression_statement (assignment left: (identifier) @name) @def.variable)))))
(module (try_statement (except_clause (block (expression_statement (assignment left: (identifier) @name) @def.variable)))))
(module (try_statement (else_clause body: (block (expression_statement (assignment left: (identifier) @name) @def.variable)))))
(module (try_statement (finally_clause (block (expression_statement (assignment left: (identifier) @name) @def.variable)))))
; Tuple unpacking at module and class level: `HORIZONTAL, VERTICAL = 1, 2`.
(module (expression_statement (assignment left: [(pattern_list (identifier) @name) (tuple_pattern (identifier) @name)]) @def.variable))
(class_definition body: (block (expression_statement (assignment left: [(pattern_list (identifier) @name) (tuple_pattern (identifier) @name)]) @def.field)))

(decorated_definition definition: (_) @wrapped) @wrapper

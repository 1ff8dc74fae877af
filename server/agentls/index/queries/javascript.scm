; JavaScript-only additions to ecmascript.scm (TypeScript calls it public_field_definition).

(field_definition property: (_) @name) @def.property

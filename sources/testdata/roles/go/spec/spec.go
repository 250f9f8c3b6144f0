package spec

// Swagger is an OpenAPI document.
type Swagger struct{}

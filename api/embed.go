// Package apidoc holds the crawler's OpenAPI document (openapi.yaml, beside this
// file), embedded so the server can serve the very document its tests verify the
// handlers against.
package apidoc

import _ "embed"

// OpenAPI is the OpenAPI 3 document of the REST API in pkg/api, as YAML.
//
//go:embed openapi.yaml
var OpenAPI []byte

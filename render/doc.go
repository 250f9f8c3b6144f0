// Package render counts tokens, fits results into a budget on the exact
// bytes a client receives, and renders the text formats.
package render

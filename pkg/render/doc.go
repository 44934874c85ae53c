// Package render decides which fetched pages need a browser: Read finds the
// signs in a page's HTML (an empty mount element, a <noscript> plea, scripts
// and next to no text or links, scripts that write the document), Compare
// measures what rendering found against the HTML alone, and Decider renders a
// host's pages with signals while it learns, then all of its pages or none
// from what its compared pages showed (store.RenderStore, shared by every
// parser), with the operator's word per host above the evidence. The render
// tier itself is package renderer.
package render

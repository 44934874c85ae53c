package parser

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
)

// TestRenderDetailRecorded: what a render waited for and what the page threw
// goes with its decision, for the URL look-up, failed renders included; a
// render without a detail (an older renderer) records none.
func TestRenderDetailRecorded(t *testing.T) {
	det := &store.RenderDetail{BoundMS: 17000, WaitedMS: 1200, ScriptErrors: []string{"Uncaught Error: x"}, TimedOutWaiting: []string{"http://a.example/app.js"},
		Subresources: []store.RenderSubresource{{URL: "http://a.example/app.js", Type: "Script", WaitMS: 1200, Pending: true}}}
	a := &analysis{}
	failedRender(queue.Page{Render: &queue.Render{Reason: "signals", Outcome: queue.RenderFailed, Error: "hung", Detail: det}}, a)
	var got store.RenderDetail
	if a.decision == nil || json.Unmarshal([]byte(a.decision.Detail), &got) != nil || !reflect.DeepEqual(&got, det) {
		t.Fatalf("failed render's decision %+v, want detail %+v", a.decision, det)
	}
	if s := detailJSON(&queue.Render{}); s != "" {
		t.Errorf("no detail recorded as %q", s)
	}
}

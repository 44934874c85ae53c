package sqlite

import (
	"testing"

	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

func TestRenderContract(t *testing.T) {
	db, _ := openTemp(t)
	storetest.RunRender(t, db.Render())
}

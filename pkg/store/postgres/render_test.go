package postgres

import (
	"testing"

	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

func TestRenderContract(t *testing.T) {
	db, _ := openFresh(t)
	storetest.RunRender(t, db.Render())
}

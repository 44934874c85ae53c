package postgres

import (
	"testing"

	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

func TestControl(t *testing.T) {
	db, _ := openFresh(t)
	storetest.Control(t, db.Control())
}

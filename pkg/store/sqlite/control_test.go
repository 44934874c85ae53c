package sqlite

import (
	"testing"

	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

func TestControl(t *testing.T) {
	db, _ := openTemp(t)
	storetest.Control(t, db.Control())
}

package sqlite

import (
	"testing"

	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

func TestFleetContract(t *testing.T) {
	db, _ := openTemp(t)
	storetest.RunFleet(t, db.Fleet())
}

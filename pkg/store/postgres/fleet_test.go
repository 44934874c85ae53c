package postgres

import (
	"testing"

	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

func TestFleetContract(t *testing.T) {
	db, _ := openFresh(t)
	storetest.RunFleet(t, db.Fleet())
}

package bufpool

import "testing"

func TestGetLengthAndClass(t *testing.T) {
	tests := []struct {
		n       int
		wantCap int // 0: exactly n, not pooled
	}{
		{0, 4 << 10},
		{1, 4 << 10},
		{4 << 10, 4 << 10},
		{4<<10 + 1, 8 << 10},
		{100 << 10, 128 << 10},
		{MaxSize, MaxSize},
		{MaxSize + 1, 0},
	}
	for _, tt := range tests {
		b := Get(tt.n)
		want := tt.wantCap
		if want == 0 {
			want = tt.n
		}
		if len(b) != tt.n || cap(b) != want {
			t.Errorf("Get(%d): len %d cap %d, want len %d cap %d", tt.n, len(b), cap(b), tt.n, want)
		}
		Put(b)
	}
}

func TestPutDropsForeignBuffers(t *testing.T) {
	// A buffer of a capacity no class has must never come back from Get,
	// which would hand out less than a class promises.
	for range 100 {
		Put(make([]byte, 5000))
		if b := Get(8 << 10); cap(b) != 8<<10 {
			t.Fatalf("Get(8 KiB) returned cap %d", cap(b))
		}
	}
}

func TestReuse(t *testing.T) {
	// sync.Pool may drop what is put (always under the race detector's
	// randomness), so reuse is asked of many tries, not one.
	reused := false
	for range 100 {
		b := Get(10 << 10)
		b[0] = 1
		Put(b)
		if c := Get(9 << 10); &c[:1][0] == &b[:1][0] {
			reused = true
			break
		}
	}
	if !reused && !raceEnabled {
		t.Error("a buffer put back was never handed out again")
	}
}

package bench

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"os"
	"strings"
)

// Line colors, one per crawler in order (ours first).
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, // blue
	{0xd6, 0x27, 0x28, 0xff}, // red
	{0x2c, 0xa0, 0x2c, 0xff}, // green
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x94, 0x67, 0xbd, 0xff}, // purple
}

// WritePNG draws pages/s over time (res.BucketSec buckets) for every crawler
// that ran into path.
func WritePNG(path string, res *Results) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := EncodeChart(f, res); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// EncodeChart writes the chart of WritePNG as PNG to w.
func EncodeChart(w io.Writer, res *Results) error {
	const W, H = 960, 480
	const left, right, top, bottom = 70, 20, 40, 50
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	black := color.RGBA{0, 0, 0, 0xff}
	grey := color.RGBA{0xdd, 0xdd, 0xdd, 0xff}

	width := res.BucketSec
	if width <= 0 {
		width = 1
	}
	maxY, maxX := 1.0, 1
	for _, r := range res.Crawlers {
		if len(r.Series) > maxX {
			maxX = len(r.Series)
		}
		for _, v := range r.Series {
			if v/width > maxY {
				maxY = v / width
			}
		}
	}
	maxY = niceCeil(maxY)
	pw, ph := W-left-right, H-top-bottom
	px := func(i float64) int { return left + int(i*float64(pw)/float64(maxX)) }
	py := func(v float64) int { return top + ph - int(v*float64(ph)/maxY) }

	// Grid, axes and labels.
	for k := 0; k <= 4; k++ {
		v := maxY * float64(k) / 4
		y := py(v)
		hline(img, left, W-right, y, grey)
		s := fmt.Sprintf("%g", v)
		drawText(img, left-6-textWidth(s), y-3, s, black)
	}
	step := (maxX + 4) / 5 // buckets between x ticks
	for k := 0; k <= maxX; k += step {
		x := px(float64(k))
		vline(img, x, top, top+ph, grey)
		s := fmt.Sprintf("%g", float64(k)*width)
		drawText(img, x-textWidth(s)/2, top+ph+8, s, black)
	}
	hline(img, left, W-right, top+ph, black)
	vline(img, left, top, top+ph, black)
	drawText(img, left, 12, fmt.Sprintf("UNIQUE PAGES/S OVER TIME, %d HOSTS X %d PAGES, DELAY %gMS",
		res.Settings.Hosts, res.Settings.PagesPerHost, res.Settings.DelayMS), black)
	drawText(img, left+pw/2-textWidth("SECONDS")/2, H-18, "SECONDS", black)

	// One line per crawler, the point of bucket i at its middle.
	n := 0
	for _, r := range res.Crawlers {
		if r.Skipped != "" {
			continue
		}
		c := palette[n%len(palette)]
		for i := range r.Series {
			x0, y0 := px(float64(i)+0.5), py(r.Series[i]/width)
			if i == 0 {
				line(img, px(0), py(0), x0, y0, c)
			}
			if i+1 < len(r.Series) {
				line(img, x0, y0, px(float64(i)+1.5), py(r.Series[i+1]/width), c)
			}
		}
		// Legend: a colored box and the name, top right.
		lx, ly := W-right-150, top+8+n*14
		fillRect(img, image.Rect(lx, ly, lx+16, ly+8), c)
		drawText(img, lx+22, ly, fmt.Sprintf("%s %.0f/S", r.Crawler, r.PagesPerSec), black)
		n++
	}
	return png.Encode(w, img)
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := 1.0
	for p*10 <= v {
		p *= 10
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func fillRect(img *image.RGBA, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}

func hline(img *image.RGBA, x0, x1, y int, c color.Color) {
	for x := x0; x <= x1; x++ {
		img.Set(x, y, c)
	}
}

func vline(img *image.RGBA, x, y0, y1 int, c color.Color) {
	for y := y0; y <= y1; y++ {
		img.Set(x, y, c)
	}
}

// line draws a 2-pixel-thick segment (Bresenham).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := 1, 1
	if x0 > x1 {
		sx = -1
	}
	if y0 > y1 {
		sy = -1
	}
	e := dx + dy
	for {
		img.Set(x0, y0, c)
		img.Set(x0, y0+1, c)
		img.Set(x0+1, y0, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// A 5x7 pixel font, upper case only ("#" is a pixel). Text is upper-cased;
// unknown characters are drawn as a box.
var font = map[rune][7]string{
	'A': {" ### ", "#   #", "#   #", "#####", "#   #", "#   #", "#   #"},
	'B': {"#### ", "#   #", "#   #", "#### ", "#   #", "#   #", "#### "},
	'C': {" ### ", "#   #", "#    ", "#    ", "#    ", "#   #", " ### "},
	'D': {"#### ", "#   #", "#   #", "#   #", "#   #", "#   #", "#### "},
	'E': {"#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#####"},
	'F': {"#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#    "},
	'G': {" ### ", "#   #", "#    ", "# ###", "#   #", "#   #", " ####"},
	'H': {"#   #", "#   #", "#   #", "#####", "#   #", "#   #", "#   #"},
	'I': {" ### ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "},
	'J': {"  ###", "   # ", "   # ", "   # ", "   # ", "#  # ", " ##  "},
	'K': {"#   #", "#  # ", "# #  ", "##   ", "# #  ", "#  # ", "#   #"},
	'L': {"#    ", "#    ", "#    ", "#    ", "#    ", "#    ", "#####"},
	'M': {"#   #", "## ##", "# # #", "# # #", "#   #", "#   #", "#   #"},
	'N': {"#   #", "#   #", "##  #", "# # #", "#  ##", "#   #", "#   #"},
	'O': {" ### ", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "},
	'P': {"#### ", "#   #", "#   #", "#### ", "#    ", "#    ", "#    "},
	'Q': {" ### ", "#   #", "#   #", "#   #", "# # #", "#  # ", " ## #"},
	'R': {"#### ", "#   #", "#   #", "#### ", "# #  ", "#  # ", "#   #"},
	'S': {" ####", "#    ", "#    ", " ### ", "    #", "    #", "#### "},
	'T': {"#####", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  "},
	'U': {"#   #", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "},
	'V': {"#   #", "#   #", "#   #", "#   #", "#   #", " # # ", "  #  "},
	'W': {"#   #", "#   #", "#   #", "# # #", "# # #", "# # #", " # # "},
	'X': {"#   #", "#   #", " # # ", "  #  ", " # # ", "#   #", "#   #"},
	'Y': {"#   #", "#   #", " # # ", "  #  ", "  #  ", "  #  ", "  #  "},
	'Z': {"#####", "    #", "   # ", "  #  ", " #   ", "#    ", "#####"},
	'0': {" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "},
	'1': {"  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "},
	'2': {" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"},
	'3': {"#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "},
	'4': {"   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "},
	'5': {"#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "},
	'6': {"  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "},
	'7': {"#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "},
	'8': {" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "},
	'9': {" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "},
	' ': {"     ", "     ", "     ", "     ", "     ", "     ", "     "},
	'.': {"     ", "     ", "     ", "     ", "     ", " ##  ", " ##  "},
	',': {"     ", "     ", "     ", "     ", " ##  ", "  #  ", " #   "},
	'/': {"     ", "    #", "   # ", "  #  ", " #   ", "#    ", "     "},
	':': {"     ", " ##  ", " ##  ", "     ", " ##  ", " ##  ", "     "},
	'-': {"     ", "     ", "     ", "#####", "     ", "     ", "     "},
	'%': {"##   ", "##  #", "   # ", "  #  ", " #   ", "#  ##", "   ##"},
	'(': {"   # ", "  #  ", " #   ", " #   ", " #   ", "  #  ", "   # "},
	')': {" #   ", "  #  ", "   # ", "   # ", "   # ", "  #  ", " #   "},
	'+': {"     ", "  #  ", "  #  ", "#####", "  #  ", "  #  ", "     "},
}

var box = [7]string{"#####", "#   #", "#   #", "#   #", "#   #", "#   #", "#####"}

func textWidth(s string) int { return 6 * len([]rune(s)) }

// drawText draws s with its top-left corner at (x, y).
func drawText(img *image.RGBA, x, y int, s string, c color.Color) {
	for _, ch := range strings.ToUpper(s) {
		g, ok := font[ch]
		if !ok {
			g = box
		}
		for row, bits := range g {
			for col, b := range bits {
				if b == '#' {
					img.Set(x+col, y+row, c)
				}
			}
		}
		x += 6
	}
}

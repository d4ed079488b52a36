package main

import (
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// plotSeries draws --plot's SVG: records/s over time above the p50 and p99
// append latency over time, one point a second.
func plotSeries(w io.Writer, samples []benchSample, title string) error {
	rate, p50, p99 := make(plotter.XYs, len(samples)), make(plotter.XYs, len(samples)), make(plotter.XYs, len(samples))
	for i, s := range samples {
		x := s.at.Seconds()
		rate[i] = plotter.XY{X: x, Y: s.records}
		p50[i], p99[i] = plotter.XY{X: x, Y: s.p50}, plotter.XY{X: x, Y: s.p99}
	}
	top, err := linePlot(title, "records/s", []namedLine{{"records/s", rate, color.RGBA{B: 200, A: 255}}})
	if err != nil {
		return err
	}
	bottom, err := linePlot("append latency", "ms", []namedLine{
		{"p50", p50, color.RGBA{G: 140, A: 255}}, {"p99", p99, color.RGBA{R: 200, A: 255}}})
	if err != nil {
		return err
	}
	canvas := vgsvg.New(8*vg.Inch, 6*vg.Inch)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6), PadY: vg.Points(12)}
	cells := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, draw.New(canvas))
	top.Draw(cells[0][0])
	bottom.Draw(cells[1][0])
	_, err = canvas.WriteTo(w)
	return err
}

type namedLine struct {
	name   string
	points plotter.XYs
	color  color.Color
}

func linePlot(title, unit string, lines []namedLine) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = unit
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	for _, l := range lines {
		line, err := plotter.NewLine(l.points)
		if err != nil {
			return nil, err
		}
		line.Color = l.color
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(l.name, line)
	}
	p.Legend.Top = true
	return p, nil
}

using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Security;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// frametimes.svg: per rate, frame time over the run (one line per way, the 16.7 ms budget marked, frames with a
    /// collection dotted) beside a histogram of frame times; both time axes logarithmic, so a 0.5 ms frame and a 200 ms
    /// pause fit one chart.
    /// </summary>
    internal static class FrameTimesSvg
    {
        private const int Width = 1000;
        private const int PanelHeight = 240;
        private const int Top = 60;
        private const int Left = 60;
        private const int LineWidth = 560;
        private const int HistLeft = Left + LineWidth + 70;
        private const int HistWidth = 240;
        private const int Bins = 30;

        public static string Render(FrameTimesReport report)
        {
            List<int> rates = report.Logs.Select(l => l.Rate).Distinct().ToList();
            int height = Top + rates.Count * (PanelHeight + 70) + 30;
            double maxNs = Math.Max(20e6, report.Logs.SelectMany(l => l.WallNs.Take(l.Count)).DefaultIfEmpty(1).Max() * 1.2);
            double minNs = Math.Max(10e3, report.Logs.SelectMany(l => l.WallNs.Take(l.Count)).DefaultIfEmpty(1).Min() * 0.8);
            var svg = new StringBuilder();
            svg.Append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").Append(Width).Append("\" height=\"").Append(height)
               .Append("\" viewBox=\"0 0 ").Append(Width).Append(' ').Append(height).Append("\" font-family=\"sans-serif\" font-size=\"12\">\n");
            svg.Append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
            Text(svg, 10, 22, Escape("Frame times: " + report.RuntimeDescription + ", live heap " + (report.LiveHeapBytes >> 20) + " MB, "
                + report.Options.Clients + " clients x " + report.Options.Entities + " updates per frame"), "font-size=\"15\" font-weight=\"bold\"");
            Text(svg, 10, 40, Escape(report.MachineDescription + " (shared, loaded); " + report.Date), "fill=\"#555\"");

            for (int r = 0; r < rates.Count; r++)
            {
                int y0 = Top + r * (PanelHeight + 70) + 20;
                List<FrameLog> logs = report.Logs.Where(l => l.Rate == rates[r]).ToList();
                Text(svg, Left, y0 - 6, Escape(FrameTimesReport.RateName(rates[r]) + ": frame time (ms, log scale) over the run"), "font-weight=\"bold\"");
                Text(svg, HistLeft, y0 - 6, "frames per frame-time bin (log)", "font-weight=\"bold\"");
                Axis(svg, y0, minNs, maxNs, Left, LineWidth);
                double budgetY = Y(FrameTimesReport.BudgetMs * 1e6, y0, minNs, maxNs);
                Line(svg, Left, budgetY, Left + LineWidth, budgetY, "#c00", "stroke-dasharray=\"6 4\"");
                Text(svg, Left + LineWidth + 4, budgetY + 4, "16.7 ms", "fill=\"#c00\"");
                int longest = logs.Max(l => l.Count);
                foreach (FrameLog log in logs)
                {
                    string colour = Colour(log.Way);
                    var points = new StringBuilder();
                    for (int i = 0; i < log.Count; i++)
                    {
                        double x = Left + LineWidth * (longest <= 1 ? 0 : i / (double)(longest - 1));
                        points.Append(F(x)).Append(',').Append(F(Y(log.WallNs[i], y0, minNs, maxNs))).Append(' ');
                    }
                    svg.Append("<polyline fill=\"none\" stroke=\"").Append(colour).Append("\" stroke-width=\"1\" points=\"").Append(points).Append("\"/>\n");
                    for (int i = 0; i < log.Count; i++)
                    {
                        if (log.Collections[i] == 0) continue;
                        double x = Left + LineWidth * (longest <= 1 ? 0 : i / (double)(longest - 1));
                        svg.Append("<circle cx=\"").Append(F(x)).Append("\" cy=\"").Append(F(Y(log.WallNs[i], y0, minNs, maxNs))).Append("\" r=\"2.5\" fill=\"").Append(colour).Append("\"/>\n");
                    }
                }
                Histogram(svg, logs, y0, minNs, maxNs);
                Text(svg, Left, y0 + PanelHeight + 32, "frame number (each way's frames, interleaved in rounds; a dot: a collection ran in that frame)", "fill=\"#555\"");
            }
            int legendY = height - 14;
            Text(svg, 10, legendY, "orange: allocating way; blue: this library; red dashes: the 60 Hz budget (16.7 ms).", "font-size=\"11\" fill=\"#555\"");
            svg.Append("</svg>\n");
            return svg.ToString();
        }

        private static void Histogram(StringBuilder svg, List<FrameLog> logs, int y0, double minNs, double maxNs)
        {
            double logMin = Math.Log10(minNs), logMax = Math.Log10(maxNs);
            int maxCount = 1;
            var counts = new List<int[]>();
            foreach (FrameLog log in logs)
            {
                var bins = new int[Bins];
                for (int i = 0; i < log.Count; i++)
                {
                    int b = (int)((Math.Log10(Math.Max(log.WallNs[i], minNs)) - logMin) / (logMax - logMin) * Bins);
                    bins[Math.Max(0, Math.Min(Bins - 1, b))]++;
                }
                counts.Add(bins);
                maxCount = Math.Max(maxCount, bins.Max());
            }
            double logCount = Math.Log10(maxCount + 1);
            Line(svg, HistLeft, y0, HistLeft, y0 + PanelHeight, "black", "");
            Line(svg, HistLeft, y0 + PanelHeight, HistLeft + HistWidth, y0 + PanelHeight, "black", "");
            double budgetY = Y(FrameTimesReport.BudgetMs * 1e6, y0, minNs, maxNs);
            Line(svg, HistLeft, budgetY, HistLeft + HistWidth, budgetY, "#c00", "stroke-dasharray=\"6 4\"");
            double binHeight = PanelHeight / (double)Bins;
            for (int w = 0; w < logs.Count; w++)
            {
                for (int b = 0; b < Bins; b++)
                {
                    if (counts[w][b] == 0) continue;
                    double length = HistWidth * Math.Log10(counts[w][b] + 1) / logCount;
                    double top = y0 + PanelHeight - (b + 1) * binHeight + (w * binHeight / logs.Count);
                    svg.Append("<rect x=\"").Append(HistLeft).Append("\" y=\"").Append(F(top)).Append("\" width=\"").Append(F(length)).Append("\" height=\"")
                       .Append(F(binHeight / logs.Count)).Append("\" fill=\"").Append(Colour(logs[w].Way)).Append("\"/>\n");
                    if (b == counts[w].ToList().FindLastIndex(c => c > 0))
                        Text(svg, HistLeft + length + 3, top + binHeight / logs.Count, counts[w][b].ToString(CultureInfo.InvariantCulture), "font-size=\"10\"");
                }
            }
            Text(svg, HistLeft, y0 + PanelHeight + 16, "1", "font-size=\"10\" fill=\"#555\"");
            Text(svg, HistLeft + HistWidth, y0 + PanelHeight + 16, maxCount.ToString(CultureInfo.InvariantCulture), "font-size=\"10\" fill=\"#555\" text-anchor=\"end\"");
        }

        private static void Axis(StringBuilder svg, int y0, double minNs, double maxNs, int left, int width)
        {
            Line(svg, left, y0, left, y0 + PanelHeight, "black", "");
            Line(svg, left, y0 + PanelHeight, left + width, y0 + PanelHeight, "black", "");
            foreach (double ms in new[] { 0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000, 10000, 30000 })
            {
                double ns = ms * 1e6;
                if (ns < minNs || ns > maxNs) continue;
                double y = Y(ns, y0, minNs, maxNs);
                Line(svg, left - 4, y, left + width, y, "#ddd", "");
                Text(svg, left - 6, y + 4, ms.ToString(CultureInfo.InvariantCulture), "text-anchor=\"end\" font-size=\"10\"");
            }
        }

        private static double Y(double ns, int y0, double minNs, double maxNs)
        {
            double v = (Math.Log10(Math.Max(ns, minNs)) - Math.Log10(minNs)) / (Math.Log10(maxNs) - Math.Log10(minNs));
            return y0 + PanelHeight * (1 - Math.Min(1, v));
        }

        private static string Colour(string way) => way == "library" ? "#2a7ab9" : "#d9822b";

        private static void Line(StringBuilder svg, double x1, double y1, double x2, double y2, string colour, string attributes)
        {
            svg.Append("<line x1=\"").Append(F(x1)).Append("\" y1=\"").Append(F(y1)).Append("\" x2=\"").Append(F(x2)).Append("\" y2=\"").Append(F(y2))
               .Append("\" stroke=\"").Append(colour).Append('"');
            if (attributes.Length > 0) svg.Append(' ').Append(attributes);
            svg.Append("/>\n");
        }

        private static void Text(StringBuilder svg, double x, double y, string text, string attributes)
        {
            svg.Append("<text x=\"").Append(F(x)).Append("\" y=\"").Append(F(y)).Append('"');
            if (attributes.Length > 0) svg.Append(' ').Append(attributes);
            svg.Append('>').Append(text).Append("</text>\n");
        }

        private static string Escape(string text) => SecurityElement.Escape(text) ?? "";

        private static string F(double value) => value.ToString("F1", CultureInfo.InvariantCulture);
    }
}

using System;
using System.Collections.Generic;
using System.Globalization;
using System.Security;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>results.svg: two bar charts, datagrams/s and bytes allocated per datagram, one bar per method.</summary>
    internal static class SvgChart
    {
        private const int Width = 960;
        private const int LabelWidth = 170;
        private const int PanelWidth = 360;
        private const int Gap = 60;
        private const int BarHeight = 22;
        private const int RowHeight = 32;
        private const int Top = 70;
        private const int LabelRoom = 90; // right of the longest bar, for its value

        public static string Render(string title, IReadOnlyList<ResultRow> rows)
        {
            int height = Top + rows.Count * RowHeight + 40;
            double maxRate = 1, maxBytes = 1;
            foreach (ResultRow r in rows)
            {
                maxRate = Math.Max(maxRate, r.DatagramsPerSecond);
                if (r.BytesPerDatagram != null) maxBytes = Math.Max(maxBytes, r.BytesPerDatagram.Value);
            }

            var svg = new StringBuilder();
            svg.Append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").Append(Width).Append("\" height=\"").Append(height)
               .Append("\" viewBox=\"0 0 ").Append(Width).Append(' ').Append(height).Append("\" font-family=\"sans-serif\" font-size=\"13\">\n");
            svg.Append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
            Text(svg, 10, 24, Escape(title), "font-size=\"16\" font-weight=\"bold\"");
            int x1 = LabelWidth, x2 = LabelWidth + PanelWidth + Gap;
            Text(svg, x1, Top - 14, "datagrams per second (higher is better)", "font-weight=\"bold\"");
            Text(svg, x2, Top - 14, "bytes allocated per datagram (lower is better)", "font-weight=\"bold\"");

            for (int i = 0; i < rows.Count; i++)
            {
                ResultRow r = rows[i];
                int y = Top + i * RowHeight;
                bool c = r.AllocatedBytes == null;
                string colour = c ? "#7f7f7f" : r.Method.StartsWith("library", StringComparison.Ordinal) ? "#2a7ab9" : "#d9822b";
                Text(svg, LabelWidth - 8, y + 16, Escape(r.Method), "text-anchor=\"end\"");

                double rateWidth = (PanelWidth - LabelRoom) * r.DatagramsPerSecond / maxRate;
                Bar(svg, x1, y, rateWidth, colour);
                Text(svg, x1 + rateWidth + 4, y + 16, Numbers.Short(r.DatagramsPerSecond) + "/s", "");

                if (c)
                {
                    Text(svg, x2, y + 16, "n/a (C)", "fill=\"#7f7f7f\"");
                }
                else
                {
                    double bytes = r.BytesPerDatagram ?? 0;
                    double bytesWidth = (PanelWidth - LabelRoom) * bytes / maxBytes;
                    Bar(svg, x2, y, bytesWidth, colour);
                    Text(svg, x2 + bytesWidth + 4, y + 16, Numbers.Bytes(bytes) + " B", bytes == 0 ? "font-weight=\"bold\"" : "");
                }
            }
            svg.Append("<line x1=\"").Append(x1).Append("\" y1=\"").Append(Top - 4).Append("\" x2=\"").Append(x1).Append("\" y2=\"").Append(Top + rows.Count * RowHeight)
               .Append("\" stroke=\"black\"/>\n");
            svg.Append("<line x1=\"").Append(x2).Append("\" y1=\"").Append(Top - 4).Append("\" x2=\"").Append(x2).Append("\" y2=\"").Append(Top + rows.Count * RowHeight)
               .Append("\" stroke=\"black\"/>\n");
            Text(svg, 10, height - 14, "orange: runtime sockets; blue: this library; grey: C reference (bench/native). lost = 0 in every row is checked, not assumed.", "font-size=\"11\" fill=\"#555\"");
            svg.Append("</svg>\n");
            return svg.ToString();
        }

        private static void Bar(StringBuilder svg, double x, double y, double width, string colour)
        {
            svg.Append("<rect x=\"").Append(F(x)).Append("\" y=\"").Append(F(y)).Append("\" width=\"").Append(F(Math.Max(width, 0)))
               .Append("\" height=\"").Append(BarHeight).Append("\" fill=\"").Append(colour).Append("\"/>\n");
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

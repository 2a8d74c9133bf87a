using System;
using System.Collections.Generic;
using System.IO;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The contract tables of docs/CONTRACT.md (copied next to the test assembly by the test projects): for a
    /// section ("Receive", "Send"), each row's id and its cells by column name, backticks removed.
    /// </summary>
    public static class ContractTable
    {
        /// <summary>Every section ("## " heading) of the document that holds a table, in the document's order.</summary>
        public static List<string> Sections()
        {
            string[] lines = Lines();
            var sections = new List<string>();
            string? current = null;
            foreach (string line in lines)
            {
                if (line.StartsWith("## ", StringComparison.Ordinal)) current = line.Substring(3);
                else if (current != null && line.StartsWith("|", StringComparison.Ordinal) && !sections.Contains(current)) sections.Add(current);
            }
            return sections;
        }

        public static Dictionary<string, Dictionary<string, string>> Load(string section)
        {
            string[] lines = Lines();
            int start = Array.IndexOf(lines, "## " + section);
            if (start < 0) throw new InvalidOperationException("docs/CONTRACT.md has no section '## " + section + "'.");
            string[]? header = null;
            var rows = new Dictionary<string, Dictionary<string, string>>(StringComparer.Ordinal);
            bool ended = false;
            for (int i = start + 1; i < lines.Length && !lines[i].StartsWith("## ", StringComparison.Ordinal); i++)
            {
                if (!lines[i].StartsWith("|", StringComparison.Ordinal))
                {
                    ended |= header != null;
                    continue;
                }
                // A second table would be read with the first one's header: one table per section.
                if (ended) throw new InvalidOperationException("The section '" + section + "' of docs/CONTRACT.md holds a second table (line " + (i + 1) + "): give it a section of its own.");
                string[] cells = Split(lines[i]);
                if (header == null)
                {
                    header = cells;
                    continue;
                }
                if (cells[0].StartsWith("-", StringComparison.Ordinal)) continue; // the |---| line
                var row = new Dictionary<string, string>(StringComparer.Ordinal);
                for (int c = 2; c < cells.Length && c < header.Length; c++) row[header[c]] = cells[c].Replace("`", "");
                rows[cells[0]] = row;
            }
            if (rows.Count == 0) throw new InvalidOperationException("The section '" + section + "' of docs/CONTRACT.md holds no table.");
            return rows;
        }

        private static string[] Lines()
        {
            // Beside the test assembly: under xunit's console runner on Mono the process's base directory is the runner's.
            string path = Path.Combine(Path.GetDirectoryName(typeof(ContractTable).Assembly.Location) ?? AppContext.BaseDirectory, "CONTRACT.md");
            return File.ReadAllLines(path);
        }

        private static string[] Split(string line)
        {
            string[] parts = line.Trim().Trim('|').Split('|');
            for (int i = 0; i < parts.Length; i++) parts[i] = parts[i].Trim();
            return parts;
        }
    }
}

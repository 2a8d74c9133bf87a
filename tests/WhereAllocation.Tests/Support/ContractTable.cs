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
        public static Dictionary<string, Dictionary<string, string>> Load(string section)
        {
            // Beside the test assembly: under xunit's console runner on Mono the process's base directory is the runner's.
            string path = Path.Combine(Path.GetDirectoryName(typeof(ContractTable).Assembly.Location) ?? AppContext.BaseDirectory, "CONTRACT.md");
            string[] lines = File.ReadAllLines(path);
            int start = Array.IndexOf(lines, "## " + section);
            if (start < 0) throw new InvalidOperationException("docs/CONTRACT.md has no section '## " + section + "'.");
            string[]? header = null;
            var rows = new Dictionary<string, Dictionary<string, string>>(StringComparer.Ordinal);
            for (int i = start + 1; i < lines.Length && !lines[i].StartsWith("## ", StringComparison.Ordinal); i++)
            {
                if (!lines[i].StartsWith("|", StringComparison.Ordinal)) continue;
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

        private static string[] Split(string line)
        {
            string[] parts = line.Trim().Trim('|').Split('|');
            for (int i = 0; i < parts.Length; i++) parts[i] = parts[i].Trim();
            return parts;
        }
    }
}

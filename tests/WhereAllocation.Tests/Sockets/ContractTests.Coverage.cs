using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using Xunit;

namespace WhereAllocation.Tests
{
    public partial class ContractTests
    {
        /// <summary>
        /// Every filled cell of every table of docs/CONTRACT.md (every section that holds one, every row, every column) is
        /// declared observed by a test (<see cref="ObservesAttribute"/>), and every declaration names a table, row and column
        /// the document has, on a test. The declaring tests fail when they leave a declared cell unobserved, so a row or a
        /// column added to the document without a test that reads it fails here.
        /// </summary>
        [Fact]
        public void EveryDocumentedCellIsObservedByATest()
        {
            var declarations = ContractCoverage.All().ToList();
            var wrong = new List<string>();
            foreach ((MethodInfo test, ObservesAttribute o) in declarations)
            {
                string who = test.DeclaringType!.Name + "." + test.Name;
                if (test.GetCustomAttribute<FactAttribute>() == null) wrong.Add(who + " declares cells but is not a test");
                if (!ContractTable.Sections().Contains(o.Section))
                {
                    wrong.Add(who + " declares cells of '" + o.Section + "', which is no table of the document");
                    continue;
                }
                Dictionary<string, Dictionary<string, string>> table = ContractTable.Load(o.Section);
                foreach (string row in o.Rows)
                {
                    if (!table.ContainsKey(row)) wrong.Add(who + ": '" + o.Section + "' has no row " + row);
                }
                foreach (string column in o.Columns)
                {
                    if (!table.Values.First().ContainsKey(column)) wrong.Add(who + ": '" + o.Section + "' has no column '" + column + "'");
                }
            }
            int cells = 0;
            foreach (string section in ContractTable.Sections())
            {
                foreach (KeyValuePair<string, Dictionary<string, string>> row in ContractTable.Load(section))
                {
                    foreach (KeyValuePair<string, string> cell in row.Value)
                    {
                        if (!ContractCoverage.IsFilled(cell.Value)) continue;
                        cells++;
                        if (!declarations.Any(d => d.Cells.Section == section && d.Cells.Rows.Contains(row.Key) && d.Cells.Columns.Contains(cell.Key)))
                            wrong.Add("'" + section + "' / " + row.Key + " / " + cell.Key + " (" + cell.Value + "): no test observes it");
                    }
                }
            }
            Assert.True(cells > 0, "the document holds no filled cell");
            Assert.True(wrong.Count == 0, string.Join("\n", wrong));
        }
    }
}

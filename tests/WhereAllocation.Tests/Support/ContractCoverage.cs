using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Declares the cells of one table of docs/CONTRACT.md that the test it marks observes: <paramref name="rows"/> (ids,
    /// space-separated) × <paramref name="columns"/> (column names, separated by ';'), of those the document fills (a "–" or
    /// "-" cell says "does not apply" and is not observed). Two checks make the declarations the truth:
    /// <see cref="ContractTests.EveryDocumentedCellIsObservedByATest"/> fails when a documented cell of any table is
    /// declared by no test (a row or a column added to the document without its test), and the declaring test fails when
    /// it did not observe every cell it declares, or observed one it does not declare
    /// (<see cref="ContractCoverage.Required"/>). So no cell is read by nobody, whatever order the tests run in, in
    /// whatever processes (xunit's runners, the suite's own runner, one Wine process per class).
    /// </summary>
    [AttributeUsage(AttributeTargets.Method, AllowMultiple = true)]
    public sealed class ObservesAttribute : Attribute
    {
        public ObservesAttribute(string section, string rows, string columns)
        {
            Section = section;
            Rows = rows.Split(new[] { ' ' }, StringSplitOptions.RemoveEmptyEntries);
            Columns = columns.Split(';').Select(c => c.Trim()).Where(c => c.Length > 0).ToArray();
        }

        public string Section { get; }
        public string[] Rows { get; }
        public string[] Columns { get; }

        /// <summary>Set when the cells can be produced on this path only (an OS stand-in exists only for the native path's calls): elsewhere the test need not observe them.</summary>
        public DatagramPath OnlyOn { get; set; } = (DatagramPath)(-1);

        public bool AppliesOn(DatagramPath path) => (int)OnlyOn < 0 || OnlyOn == path;
    }

    /// <summary>The declarations of <see cref="ObservesAttribute"/>, read back for the checks.</summary>
    public static class ContractCoverage
    {
        /// <summary>Is a documented cell one that a test must observe ("–" and "-" say the situation does not apply)?</summary>
        public static bool IsFilled(string cell) => cell != "–" && cell != "-" && cell.Length > 0;

        /// <summary>The test method <paramref name="name"/> of <paramref name="type"/>, which must be a [Fact] or [Theory].</summary>
        public static MethodInfo Test(Type type, string name)
        {
            MethodInfo? method = type.GetMethod(name, BindingFlags.Public | BindingFlags.Instance);
            Assert.True(method != null && method.GetCustomAttribute<FactAttribute>() != null, type.Name + "." + name + " is not a test");
            return method!;
        }

        /// <summary>Does <paramref name="test"/> declare cell (<paramref name="row"/>, <paramref name="column"/>) of <paramref name="section"/>?</summary>
        public static bool Declares(MethodInfo test, string section, string row, string column) =>
            test.GetCustomAttributes<ObservesAttribute>().Any(o => o.Section == section && o.Rows.Contains(row) && o.Columns.Contains(column));

        /// <summary>
        /// The cells of <paramref name="section"/> that <paramref name="test"/> must observe when it runs on <paramref name="path"/>:
        /// the ones it declares there that the document fills, as "row / column".
        /// </summary>
        public static HashSet<string> Required(MethodInfo test, string section, DatagramPath path)
        {
            Dictionary<string, Dictionary<string, string>> table = ContractTable.Load(section);
            var required = new HashSet<string>(StringComparer.Ordinal);
            foreach (ObservesAttribute o in test.GetCustomAttributes<ObservesAttribute>())
            {
                if (o.Section != section || !o.AppliesOn(path)) continue;
                foreach (string row in o.Rows)
                {
                    foreach (string column in o.Columns)
                    {
                        if (table.TryGetValue(row, out Dictionary<string, string>? cells) && cells.TryGetValue(column, out string? cell) && IsFilled(cell))
                            required.Add(row + " / " + column);
                    }
                }
            }
            return required;
        }

        /// <summary>Every declaration of every test in the suite, with the test that makes it.</summary>
        public static IEnumerable<(MethodInfo Test, ObservesAttribute Cells)> All()
        {
            foreach (Type type in typeof(ContractCoverage).Assembly.GetTypes())
            {
                foreach (MethodInfo method in type.GetMethods(BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly))
                {
                    foreach (ObservesAttribute o in method.GetCustomAttributes<ObservesAttribute>()) yield return (method, o);
                }
            }
        }
    }
}

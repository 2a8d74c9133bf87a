using System.Collections.Generic;
using System.Linq;
using System.Runtime.CompilerServices;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>The table of docs/CONTRACT.md's "Awaits and pollers in detail": what an awaited receive (row A1) gives in each situation.</summary>
    public static class AwaitsContract
    {
        public const string Section = "Awaits and pollers in detail";

        private static Dictionary<string, string>? s_receive;

        /// <summary>
        /// The cell of row A1 in <paramref name="column"/>, backticks removed, for the test <paramref name="test"/> (the caller),
        /// which must declare it (<see cref="ObservesAttribute"/>): the declarations are what
        /// <see cref="ContractTests.EveryDocumentedCellIsObservedByATest"/> reads.
        /// </summary>
        public static string Cell(string column, [CallerMemberName] string test = "")
        {
            Assert.True(ContractCoverage.All().Any(d => d.Test.Name == test && d.Cells.Section == Section && d.Cells.Rows.Contains("A1") && d.Cells.Columns.Contains(column)),
                test + " observes '" + Section + "' / A1 / " + column + " without declaring it ([Observes])");
            s_receive ??= ContractTable.Load(Section)["A1"];
            return s_receive[column];
        }
    }
}

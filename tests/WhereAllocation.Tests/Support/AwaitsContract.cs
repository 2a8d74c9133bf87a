using System.Collections.Generic;

namespace WhereAllocation.Tests
{
    /// <summary>The table of docs/CONTRACT.md's "Round 2: awaits and pollers": what an awaited receive (row A1) gives in each situation.</summary>
    public static class AwaitsContract
    {
        private static Dictionary<string, string>? s_receive;

        /// <summary>The cell of row A1 in <paramref name="column"/>, backticks removed.</summary>
        public static string Cell(string column)
        {
            s_receive ??= ContractTable.Load("Round 2: awaits and pollers")["A1"];
            return s_receive[column];
        }
    }
}

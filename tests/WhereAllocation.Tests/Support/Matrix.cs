using System;
using System.Collections;
using System.Collections.Generic;
using System.Linq;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The data of the suite's theories: every datagram path, address family, continuation mode and batch mode, and the
    /// products of them that the theories run over. Each dimension is read from its enum, so a path, family or mode added
    /// there is run by every theory over it with nothing else to change. A theory names its data with
    /// <c>[MemberData(nameof(Matrix.PathsWithFamilies), MemberType = typeof(Matrix))]</c>. A theory that deliberately runs
    /// part of a product keeps that part as a rule over the whole (the <c>…Where</c> sources, in a property of its own class
    /// whose summary names the part), so that a new value still lands where the rule puts it; one with a dimension of its own (sizes,
    /// flags) builds it with <see cref="Product"/> from these dimensions.
    /// </summary>
    public static class Matrix
    {
        public static IReadOnlyList<DatagramPath> EveryPath { get; } = Values<DatagramPath>();
        public static IReadOnlyList<Family> EveryFamily { get; } = Values<Family>();
        public static IReadOnlyList<DatagramContinuations> EveryContinuation { get; } = Values<DatagramContinuations>();
        public static IReadOnlyList<DatagramBatchMode> EveryBatchMode { get; } = Values<DatagramBatchMode>();
        public static IReadOnlyList<bool> Booleans { get; } = new[] { false, true };

        /// <summary>Every datagram path.</summary>
        public static TheoryData<DatagramPath> Paths => PathsWhere(p => true);

        /// <summary>Every address family of <see cref="Loopback"/>.</summary>
        public static TheoryData<Family> Families
        {
            get
            {
                var data = new TheoryData<Family>();
                foreach (Family f in EveryFamily) data.Add(f);
                return data;
            }
        }

        /// <summary>Every continuation mode of <see cref="AsyncDatagramSocket"/>.</summary>
        public static TheoryData<DatagramContinuations> Continuations
        {
            get
            {
                var data = new TheoryData<DatagramContinuations>();
                foreach (DatagramContinuations m in EveryContinuation) data.Add(m);
                return data;
            }
        }

        /// <summary>Every batch mode.</summary>
        public static TheoryData<DatagramBatchMode> BatchModes
        {
            get
            {
                var data = new TheoryData<DatagramBatchMode>();
                foreach (DatagramBatchMode m in EveryBatchMode) data.Add(m);
                return data;
            }
        }

        /// <summary>Every path × every family.</summary>
        public static TheoryData<DatagramPath, Family> PathsWithFamilies => PathsWithFamiliesWhere((p, f) => true);

        /// <summary>Every path × every continuation mode.</summary>
        public static TheoryData<DatagramPath, DatagramContinuations> PathsWithContinuations => PathsWithContinuationsWhere((p, m) => true);

        /// <summary>Every batch mode × every family.</summary>
        public static TheoryData<DatagramBatchMode, Family> BatchModesWithFamilies => BatchModesWithFamiliesWhere((m, f) => true);

        /// <summary>The paths that promise zero allocation (Native, SocketAddress): every one but Managed, which allocates on receive.</summary>
        public static TheoryData<DatagramPath> AllocationFreePaths => PathsWhere(p => p != DatagramPath.Managed);

        /// <summary><see cref="AllocationFreePaths"/> × every family.</summary>
        public static TheoryData<DatagramPath, Family> AllocationFreePathsWithFamilies => PathsWithFamiliesWhere((p, f) => p != DatagramPath.Managed);

        /// <summary>
        /// Each batch mode on the paths it can take: MultiMessage does not depend on the active path, so it runs on Native
        /// alone; SingleCalls runs on every path.
        /// </summary>
        public static TheoryData<DatagramBatchMode, DatagramPath> BatchModesOnTheirPaths => BatchModesWithPathsWhere((m, p) => m == DatagramBatchMode.SingleCalls || p == DatagramPath.Native);

        /// <summary>
        /// Native in every continuation mode, each other path in one mode, the modes taken in turn (SocketAddress in
        /// ThreadPool, Managed in IoThread): every path and every mode run, in fewer cases than the whole product.
        /// </summary>
        public static TheoryData<DatagramPath, DatagramContinuations> PathsWithModesInTurn => PathsWithContinuationsWhere((p, m) => p == DatagramPath.Native || Turn(p, m) == 1);

        /// <summary>As <see cref="PathsWithModesInTurn"/> with the other turn (SocketAddress in IoThread, Managed in ThreadPool): the theories on the two together run every pair.</summary>
        public static TheoryData<DatagramPath, DatagramContinuations> PathsWithModesInOtherTurn => PathsWithContinuationsWhere((p, m) => p == DatagramPath.Native || Turn(p, m) == 0);

        public static TheoryData<DatagramPath> PathsWhere(Func<DatagramPath, bool> keep)
        {
            var data = new TheoryData<DatagramPath>();
            foreach (DatagramPath p in EveryPath)
                if (keep(p)) data.Add(p);
            return data;
        }

        // Every pair of the two dimensions that keep accepts, first dimension outermost.
        private static TheoryData<TA, TB> PairsWhere<TA, TB>(IReadOnlyList<TA> first, IReadOnlyList<TB> second, Func<TA, TB, bool> keep)
        {
            var data = new TheoryData<TA, TB>();
            foreach (TA a in first)
                foreach (TB b in second)
                    if (keep(a, b)) data.Add(a, b);
            return data;
        }

        public static TheoryData<DatagramPath, Family> PathsWithFamiliesWhere(Func<DatagramPath, Family, bool> keep) => PairsWhere(EveryPath, EveryFamily, keep);

        public static TheoryData<DatagramPath, DatagramContinuations> PathsWithContinuationsWhere(Func<DatagramPath, DatagramContinuations, bool> keep) => PairsWhere(EveryPath, EveryContinuation, keep);

        public static TheoryData<DatagramBatchMode, Family> BatchModesWithFamiliesWhere(Func<DatagramBatchMode, Family, bool> keep) => PairsWhere(EveryBatchMode, EveryFamily, keep);

        public static TheoryData<DatagramBatchMode, DatagramPath> BatchModesWithPathsWhere(Func<DatagramBatchMode, DatagramPath, bool> keep) => PairsWhere(EveryBatchMode, EveryPath, keep);

        /// <summary>
        /// The rows of <paramref name="rows"/> (a source above) each extended by every value of <paramref name="dimension"/>:
        /// for a theory with a dimension of its own, such as sizes or a flag.
        /// </summary>
        public static IEnumerable<object?[]> Product(IEnumerable<object?[]> rows, IEnumerable dimension)
        {
            var product = new List<object?[]>();
            foreach (object?[] row in rows)
            {
                foreach (object? value in dimension)
                {
                    var extended = new object?[row.Length + 1];
                    Array.Copy(row, extended, row.Length);
                    extended[row.Length] = value;
                    product.Add(extended);
                }
            }
            return product;
        }

        // The mode a path other than Native takes in turn: its place among the paths plus the mode's place among the modes.
        private static int Turn(DatagramPath path, DatagramContinuations mode) => (IndexOf(EveryPath, path) + IndexOf(EveryContinuation, mode)) % EveryContinuation.Count;

        private static int IndexOf<T>(IReadOnlyList<T> values, T value) where T : struct, Enum
        {
            for (int i = 0; i < values.Count; i++)
                if (values[i].Equals(value)) return i;
            throw new ArgumentException(value + " is not one of the values");
        }

        private static T[] Values<T>() where T : struct, Enum => Enum.GetValues(typeof(T)).Cast<T>().ToArray();
    }
}

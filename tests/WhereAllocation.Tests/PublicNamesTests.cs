using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Every public type name says what it is without its neighbour: no two public types of the two packages whose names
    /// differ only by a trailing "s" or by one letter (one inserted, removed or changed), which read as the same word.
    /// </summary>
    public class PublicNamesTests
    {
        [Fact]
        public void NoTwoPublicTypesAreOneLetterApart()
        {
            var names = new List<string>();
            foreach (Assembly assembly in new[] { typeof(SocketExtensions).Assembly, typeof(WhereAllocation.Memory.FrameAllocator).Assembly })
                foreach (Type type in assembly.GetExportedTypes())
                    names.Add(Plain(type));
            Assert.True(names.Count > 20, "the packages' public types were not found: " + names.Count);
            string[] close = ClosePairs(names);
            Assert.True(close.Length == 0, "public type names one letter apart: " + string.Join(", ", close));
        }

        [Fact]
        public void TheCheckSeesNamesOneLetterApart()
        {
            // The names this rule was made for, and one far enough: the check must flag the first three pairs only.
            string[] close = ClosePairs(new[] { "DatagramPath", "DatagramPaths", "DatagramShard", "DatagramShards", "PeerTable", "PeerTablet", "DatagramPathSettings" });
            Assert.Equal(new[] { "DatagramPath ~ DatagramPaths", "DatagramShard ~ DatagramShards", "PeerTable ~ PeerTablet" }, close);
        }

        // A nested type by its outer name ("DatagramBatch.Reader"); a generic one without its arity ("PeerTable").
        private static string Plain(Type type)
        {
            string name = type.Name;
            int tick = name.IndexOf('`');
            if (tick >= 0) name = name.Substring(0, tick);
            return type.DeclaringType == null ? name : Plain(type.DeclaringType) + "." + name;
        }

        private static string[] ClosePairs(IEnumerable<string> names)
        {
            string[] sorted = names.Distinct().OrderBy(n => n, StringComparer.Ordinal).ToArray();
            var close = new List<string>();
            for (int i = 0; i < sorted.Length; i++)
                for (int j = i + 1; j < sorted.Length; j++)
                    if (AtMostOneEditApart(sorted[i], sorted[j])) close.Add(sorted[i] + " ~ " + sorted[j]);
            return close.ToArray();
        }

        // True when one insertion, deletion or substitution turns a into b.
        private static bool AtMostOneEditApart(string a, string b)
        {
            if (Math.Abs(a.Length - b.Length) > 1) return false;
            if (a.Length > b.Length) (a, b) = (b, a);
            int i = 0;
            while (i < a.Length && a[i] == b[i]) i++;
            if (i == a.Length) return true; // b is a with one more letter at the end (or equal)
            return a.Length == b.Length
                ? string.CompareOrdinal(a, i + 1, b, i + 1, a.Length - i - 1) == 0
                : string.CompareOrdinal(a, i, b, i + 1, a.Length - i) == 0;
        }
    }
}

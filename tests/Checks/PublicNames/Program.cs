using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.Loader;

// Every public type name says what it is without its neighbour: no two public types of the two packages whose names
// differ only by a trailing "s" or by one letter (one inserted, removed or changed), which read as the same word.
// A check of the two packages together, so neither package's suite holds it (each builds and tests without the other):
// scripts/pack-check.sh runs it on the assemblies it packed. Usage: PublicNames <assembly.dll>...
// Prints "  ok   ..." or "  FAIL ..." per check, then "N passed, N failed"; exit code 0 when all pass.

int passed = 0, failed = 0;
void Check(bool ok, string what)
{
    if (ok) passed++; else failed++;
    Console.WriteLine((ok ? "  ok   " : "  FAIL ") + what);
}

// The check first sees the names this rule was made for, and one far enough: it must flag the first three pairs only.
string[] planted = ClosePairs(new[] { "DatagramPath", "DatagramPaths", "DatagramShard", "DatagramShards", "PeerTable", "PeerTablet", "DatagramPathSettings" });
Check(planted.SequenceEqual(new[] { "DatagramPath ~ DatagramPaths", "DatagramShard ~ DatagramShards", "PeerTable ~ PeerTablet" }),
    "the check flags the planted names one letter apart, and only those: " + string.Join(", ", planted));

var names = new List<string>();
foreach (string path in args)
{
    // A context of its own for each file: both frameworks' builds of one package carry the same assembly name.
    Assembly assembly = new AssemblyLoadContext(path).LoadFromAssemblyPath(Path.GetFullPath(path));
    Type[] exported = assembly.GetExportedTypes();
    Check(exported.Length > 0, assembly.GetName().Name + ": " + exported.Length + " public types");
    names.AddRange(exported.Select(Plain));
}
Check(args.Length >= 2 && names.Count > 20, args.Length + " assemblies, " + names.Count + " public types read");
string[] close = ClosePairs(names);
Check(close.Length == 0, "no two public types one letter apart" + (close.Length == 0 ? "" : ": " + string.Join(", ", close)));
Console.WriteLine(passed + " passed, " + failed + " failed");
return failed == 0 ? 0 : 1;

// A nested type by its outer name ("DatagramBatch.Reader"); a generic one without its arity ("PeerTable").
static string Plain(Type type)
{
    string name = type.Name;
    int tick = name.IndexOf('`');
    if (tick >= 0) name = name.Substring(0, tick);
    return type.DeclaringType == null ? name : Plain(type.DeclaringType) + "." + name;
}

static string[] ClosePairs(IEnumerable<string> names)
{
    string[] sorted = names.Distinct().OrderBy(n => n, StringComparer.Ordinal).ToArray();
    var close = new List<string>();
    for (int i = 0; i < sorted.Length; i++)
        for (int j = i + 1; j < sorted.Length; j++)
            if (AtMostOneEditApart(sorted[i], sorted[j])) close.Add(sorted[i] + " ~ " + sorted[j]);
    return close.ToArray();
}

// True when one insertion, deletion or substitution turns a into b.
static bool AtMostOneEditApart(string a, string b)
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

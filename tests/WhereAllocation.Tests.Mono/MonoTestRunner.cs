using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Reflection;
using System.Threading.Tasks;
using Xunit;

namespace WhereAllocation.Tests.Mono
{
    /// <summary>
    /// Runs the suite's [Fact] and [Theory]/[InlineData] methods on Mono, one new instance of the test
    /// class per case (disposed afterwards), as xunit does. A skipped test counts as a failure here: the
    /// suite has none, and one would hide a missing part. Optional arguments filter by substring.
    /// </summary>
    public static class MonoTestRunner
    {
        public static int Main(string[] args)
        {
            Console.WriteLine("where-allocation tests on " + Runtime.Describe());
            int passed = 0, failed = 0;
            var failures = new List<string>();
            Type[] types = typeof(MonoTestRunner).Assembly.GetTypes()
                .Where(t => t.IsClass && !t.IsAbstract && t.IsPublic)
                .OrderBy(t => t.FullName, StringComparer.Ordinal).ToArray();
            foreach (Type type in types)
            {
                foreach (MethodInfo method in type.GetMethods(BindingFlags.Public | BindingFlags.Instance).OrderBy(m => m.Name, StringComparer.Ordinal))
                {
                    var fact = method.GetCustomAttribute<FactAttribute>();
                    if (fact == null) continue;
                    foreach (object?[] arguments in Cases(method))
                    {
                        string name = type.FullName + "." + method.Name + (arguments.Length == 0 ? "" : "(" + string.Join(", ", arguments.Select(a => a?.ToString() ?? "null")) + ")");
                        if (args.Length > 0 && !args.Any(a => name.IndexOf(a, StringComparison.Ordinal) >= 0)) continue;
                        if (fact.Skip != null)
                        {
                            failed++;
                            failures.Add(name + ": skipped (" + fact.Skip + ") - a skip hides a missing part");
                            continue;
                        }
                        var watch = Stopwatch.StartNew();
                        string? error = Run(type, method, arguments);
                        if (error == null)
                        {
                            passed++;
                            Console.WriteLine("  ok   " + name + " [" + watch.ElapsedMilliseconds + " ms]");
                        }
                        else
                        {
                            failed++;
                            failures.Add(name + ": " + error);
                            Console.WriteLine("  FAIL " + name + "\n" + error);
                        }
                    }
                }
            }
            foreach (string failure in failures) Console.WriteLine("FAILED: " + failure);
            Console.WriteLine("mono: " + passed + " passed, " + failed + " failed");
            return failed == 0 && passed > 0 ? 0 : 1;
        }

        private static IEnumerable<object?[]> Cases(MethodInfo method)
        {
            if (method.GetCustomAttribute<TheoryAttribute>() == null)
            {
                yield return new object?[0];
                yield break;
            }
            foreach (var data in method.GetCustomAttributes<InlineDataAttribute>())
                foreach (object?[] row in data.GetData(method)) yield return row;
        }

        private static string? Run(Type type, MethodInfo method, object?[] arguments)
        {
            object? instance = null;
            try
            {
                instance = Activator.CreateInstance(type);
                object? result = method.Invoke(instance, arguments);
                if (result is Task task) task.GetAwaiter().GetResult();
                return null;
            }
            catch (TargetInvocationException e) when (e.InnerException != null)
            {
                return e.InnerException.ToString();
            }
            catch (Exception e)
            {
                return e.ToString();
            }
            finally
            {
                (instance as IDisposable)?.Dispose();
            }
        }
    }
}

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Linq.Expressions;
using System.Reflection;
using System.Runtime.ExceptionServices;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Xunit;
using Xunit.Sdk;

namespace WhereAllocation.Tests.Runner
{
    /// <summary>
    /// Runs the suite's [Fact] and [Theory] methods (with [InlineData] and [MemberData]) outside xunit, on the win-x64 runtime under
    /// Wine (WhereAllocation.Tests.Windows) and on Mono with the Boehm collector (WhereAllocation.Tests.Boehm: there the
    /// allocation oracle is a process-wide byte count, and xunit's console runner allocates on threads of its own while
    /// a test measures). One new instance of the test class per case (disposed
    /// afterwards), as xunit does. A skipped test counts as a failure: the suite has none, and one would
    /// hide a missing part.
    /// <para>
    /// Why not xunit's runners there (Mono and CoreCLR use them): they call each test through
    /// <c>MethodInfo.Invoke</c>, and under Wine 8 an exception thrown through that call leaves a stale
    /// exception frame behind, so the next such exception hangs (or crashes) the runtime. This runner calls
    /// tests through compiled delegates, so a test's exception stays in managed frames; it also bounds each
    /// test in time and resumes after a hung one. See docs/testing-under-wine.md.
    /// </para>
    /// <para>
    /// Usage: <c>[--list-classes | --list] [--class FullName]... [--start-after TestName] [--time-limit seconds] [--aot-only] [substring]...</c>.
    /// A filter that selects no test is a failure (exit code 3), never an empty green run.
    /// Without options every test runs; substrings keep the tests whose name contains one of them. <c>--aot-only</c>
    /// is for a runtime that refuses code made at run time (Mono's <c>--full-aot</c>, as IL2CPP): the compiled
    /// expressions below are such code, so tests are called through <c>MethodInfo.Invoke</c> instead, whose
    /// call stubs are compiled ahead of time (scripts/no-jit.sh).
    /// Prints <c>  ok   Name [ms]</c> or <c>  FAIL Name</c> and the error per test, then
    /// <c>host: N passed, N failed</c> (host = mono, windows or coreclr). A test that runs longer than the
    /// time limit fails with "timed out after N s"; the process then prints its summary (tests not run count
    /// as failed, and a "not run: N" line says how many) and exits, since the stuck thread cannot be stopped.
    /// </para>
    /// </summary>
    public static class SuiteRunner
    {
        private const int DefaultTimeLimitSeconds = 60;

        public static int Main(string[] args)
        {
            Options options;
            try
            {
                options = Options.Parse(args);
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine(e.Message);
                return 2;
            }

            Runtime.CodeMadeAtRunTimeRefused = options.AotOnly;
            List<TestCase> cases = Discover(typeof(SuiteRunner).Assembly, options.AotOnly);
            if (options.ListClasses)
            {
                foreach (string name in cases.Select(c => c.ClassName).Distinct()) Console.WriteLine(name);
                return 0;
            }
            List<TestCase> selected = cases.Where(options.Selects).ToList();
            if (selected.Count == 0)
            {
                // A filter that names nothing (a typo, a renamed class) must not pass as a green run of no test.
                Console.Error.WriteLine("no test matches the filter: none of the " + cases.Count + " tests was selected (--list-classes names the classes)");
                Console.WriteLine(Host() + ": 0 passed, 1 failed");
                return 3;
            }
            if (options.StartAfter != null)
            {
                int at = selected.FindIndex(c => c.Name == options.StartAfter);
                if (at < 0)
                {
                    Console.Error.WriteLine("--start-after: no selected test is named " + options.StartAfter);
                    return 2;
                }
                selected.RemoveRange(0, at + 1);
            }
            if (options.List)
            {
                foreach (TestCase c in selected) Console.WriteLine(c.Name);
                return 0;
            }
            return Run(selected, options.TimeLimitSeconds);
        }

        private static string Host()
        {
            if (Runtime.IsMono) return "mono";
            return RuntimeInformation.IsOSPlatform(OSPlatform.Windows) ? "windows" : "coreclr";
        }

        private static int Run(List<TestCase> selected, int timeLimitSeconds)
        {
            Console.WriteLine("where-allocation tests on " + Runtime.Describe());
            int passed = 0, failed = 0;
            var failures = new List<string>();
            var worker = new Worker();
            for (int i = 0; i < selected.Count; i++)
            {
                TestCase test = selected[i];
                if (test.Skip != null)
                {
                    failed++;
                    failures.Add(test.Name + ": skipped (" + test.Skip + ") - a skip hides a missing part");
                    Console.WriteLine("  FAIL " + test.Name + "\nskipped (" + test.Skip + ")");
                    continue;
                }
                var watch = Stopwatch.StartNew();
                if (!worker.TryRun(test, TimeSpan.FromSeconds(timeLimitSeconds), out string? error))
                {
                    failed++;
                    error = "timed out after " + timeLimitSeconds + " s";
                    failures.Add(test.Name + ": " + error);
                    Console.WriteLine("  FAIL " + test.Name + "\n" + error);
                    int notRun = selected.Count - i - 1;
                    Console.WriteLine("not run: " + notRun + " (the process stops after a timed-out test: its thread cannot be stopped); they count as failed");
                    Finish(passed, failed + notRun, failures);
                    Console.Out.Flush();
                    // The timed-out test's thread may sit in a blocking native call that nothing can interrupt: leave without waiting for it.
                    Environment.Exit(1);
                }
                if (error == null)
                {
                    passed++;
                    Console.WriteLine("  ok   " + test.Name + " [" + watch.ElapsedMilliseconds + " ms]");
                }
                else
                {
                    failed++;
                    failures.Add(test.Name + ": " + error);
                    Console.WriteLine("  FAIL " + test.Name + "\n" + error);
                }
            }
            Finish(passed, failed, failures);
            return failed == 0 && passed > 0 ? 0 : 1;
        }

        private static void Finish(int passed, int failed, List<string> failures)
        {
            foreach (string failure in failures) Console.WriteLine("FAILED: " + failure);
            Console.WriteLine(Host() + ": " + passed + " passed, " + failed + " failed");
        }

        // ----- discovery -----

        private static List<TestCase> Discover(Assembly assembly, bool aotOnly)
        {
            var cases = new List<TestCase>();
            Type[] types = assembly.GetTypes()
                .Where(t => t.IsClass && !t.IsAbstract && t.IsPublic)
                .OrderBy(t => t.FullName, StringComparer.Ordinal).ToArray();
            foreach (Type type in types)
            {
                Func<object>? create = null;
                foreach (MethodInfo method in type.GetMethods(BindingFlags.Public | BindingFlags.Instance).OrderBy(m => m.Name, StringComparer.Ordinal))
                {
                    var fact = method.GetCustomAttribute<FactAttribute>();
                    if (fact == null) continue;
                    create ??= aotOnly ? ReflectionConstructor(type) : CompileConstructor(type);
                    Func<object, object?[], object?> invoke = aotOnly ? ReflectionCall(method) : CompileCall(method);
                    List<object?[]> rows = Cases(method, out List<string> unreadable);
                    foreach (object?[] arguments in rows)
                    {
                        string name = type.FullName + "." + method.Name + (arguments.Length == 0 ? "" : "(" + string.Join(", ", arguments.Select(a => a?.ToString() ?? "null")) + ")");
                        cases.Add(new TestCase(type.FullName!, name, create, invoke, Convert(method, arguments), fact.Skip));
                    }
                    // A data source that cannot be read is a failing case of its own, not a theory with fewer cases.
                    foreach (string error in unreadable)
                        cases.Add(Unreadable(type.FullName!, type.FullName + "." + method.Name + "[data]", error));
                }
            }
            return cases;
        }

        /// <summary>
        /// The argument rows of a test: one empty row for a [Fact]; for a [Theory], the rows of its [InlineData] and of its
        /// [MemberData] (a public static property, field or method of the test's class or of MemberType, returning
        /// IEnumerable&lt;object[]&gt; such as TheoryData; read by reflection, which full AOT allows), in declaration order.
        /// A source that cannot be read (no such member, null, an exception, a row that is not an object[]) and a theory
        /// with no row at all are reported in <paramref name="unreadable"/>: the caller makes each a failing case, so that
        /// the count of cases never shrinks silently.
        /// </summary>
        private static List<object?[]> Cases(MethodInfo method, out List<string> unreadable)
        {
            unreadable = new List<string>();
            var rows = new List<object?[]>();
            if (method.GetCustomAttribute<TheoryAttribute>() == null)
            {
                rows.Add(new object?[0]);
                return rows;
            }
            foreach (DataAttribute data in method.GetCustomAttributes<DataAttribute>())
            {
                string source = Describe(data);
                try
                {
                    IEnumerable<object?[]>? read = data.GetData(method);
                    if (read == null)
                    {
                        unreadable.Add(source + " gave null instead of rows");
                        continue;
                    }
                    int before = rows.Count;
                    foreach (object?[] row in read)
                    {
                        if (row == null) throw new InvalidOperationException("a row is null");
                        rows.Add(row);
                    }
                    if (rows.Count == before) unreadable.Add(source + " gave no rows");
                }
                catch (Exception e)
                {
                    unreadable.Add(source + " cannot be read: " + (e is TargetInvocationException && e.InnerException != null ? e.InnerException : e));
                }
            }
            if (rows.Count == 0 && unreadable.Count == 0) unreadable.Add("a theory without data");
            return rows;
        }

        private static string Describe(DataAttribute data)
        {
            if (data is MemberDataAttributeBase member)
                return "[MemberData(" + member.MemberName + (member.MemberType == null ? "" : ", MemberType = " + member.MemberType.FullName) + ")]";
            return "[" + data.GetType().Name + "]";
        }

        private static TestCase Unreadable(string className, string name, string error) =>
            new TestCase(className, name, () => new object(), (instance, arguments) => throw new InvalidOperationException(error), new object?[0], null);

        // The compiled call unboxes each argument to the parameter's exact type; InlineData may hold a
        // narrower number (an int for a long), which reflection would have widened: convert it first.
        private static object?[] Convert(MethodInfo method, object?[] arguments)
        {
            ParameterInfo[] parameters = method.GetParameters();
            if (parameters.Length != arguments.Length) return arguments; // the call reports the mismatch
            var converted = new object?[arguments.Length];
            for (int i = 0; i < arguments.Length; i++)
            {
                object? a = arguments[i];
                Type p = Nullable.GetUnderlyingType(parameters[i].ParameterType) ?? parameters[i].ParameterType;
                if (a != null && !p.IsInstanceOfType(a) && a is IConvertible)
                    a = p.IsEnum ? Enum.ToObject(p, a) : System.Convert.ChangeType(a, p, CultureInfo.InvariantCulture);
                converted[i] = a;
            }
            return converted;
        }

        // Tests are called through compiled delegates, not MethodInfo.Invoke: a test's exception then
        // reaches the runner as itself, with no reflection frame in between (the win-x64 runtime under
        // Wine crashed when an exception was thrown through MethodInfo.Invoke's frame).
        private static Func<object> CompileConstructor(Type type)
        {
            ConstructorInfo? constructor = type.GetConstructor(Type.EmptyTypes);
            if (constructor == null)
                return () => throw new InvalidOperationException(type.FullName + " has no public parameterless constructor");
            return Expression.Lambda<Func<object>>(Expression.Convert(Expression.New(constructor), typeof(object))).Compile();
        }

        private static Func<object, object?[], object?> CompileCall(MethodInfo method)
        {
            ParameterExpression instance = Expression.Parameter(typeof(object), "instance");
            ParameterExpression arguments = Expression.Parameter(typeof(object[]), "arguments");
            ParameterInfo[] parameters = method.GetParameters();
            Expression[] values = parameters
                .Select((p, i) => (Expression)Expression.Convert(Expression.ArrayIndex(arguments, Expression.Constant(i)), p.ParameterType))
                .ToArray();
            Expression call = Expression.Call(Expression.Convert(instance, method.DeclaringType!), method, values);
            Expression body = method.ReturnType == typeof(void)
                ? Expression.Block(call, Expression.Constant(null, typeof(object)))
                : Expression.Convert(call, typeof(object));
            Func<object, object?[], object?> compiled = Expression.Lambda<Func<object, object?[], object?>>(body, instance, arguments).Compile();
            int count = parameters.Length;
            return (target, args) =>
            {
                if (args.Length != count) throw new ArgumentException(method.Name + " takes " + count + " arguments; its data row has " + args.Length);
                return compiled(target, args);
            };
        }

        // Under full AOT (no code made at run time): reflection's calls, with the test's own exception rethrown
        // from the TargetInvocationException that wraps it, so that a failure reads as under the compiled calls.
        private static Func<object> ReflectionConstructor(Type type)
        {
            if (type.GetConstructor(Type.EmptyTypes) == null)
                return () => throw new InvalidOperationException(type.FullName + " has no public parameterless constructor");
            return () => Unwrapped(() => Activator.CreateInstance(type)!);
        }

        private static Func<object, object?[], object?> ReflectionCall(MethodInfo method)
        {
            int count = method.GetParameters().Length;
            return (target, args) =>
            {
                if (args.Length != count) throw new ArgumentException(method.Name + " takes " + count + " arguments; its data row has " + args.Length);
                return Unwrapped(() => method.Invoke(target, args));
            };
        }

        private static T Unwrapped<T>(Func<T> call)
        {
            try
            {
                return call();
            }
            catch (TargetInvocationException e) when (e.InnerException != null)
            {
                ExceptionDispatchInfo.Capture(e.InnerException).Throw();
                throw; // not reached: Throw above always throws
            }
        }

        // ----- execution -----

        private static string? Execute(TestCase test)
        {
            object? instance = null;
            string? error = null;
            try
            {
                instance = test.Create();
                object? result = test.Invoke(instance, test.Arguments);
                if (result is Task task) task.GetAwaiter().GetResult();
            }
            catch (Exception e)
            {
                error = e.ToString();
            }
            try
            {
                (instance as IDisposable)?.Dispose();
            }
            catch (Exception e)
            {
                error = (error == null ? "" : error + "\n") + "Dispose threw: " + e;
            }
            return error;
        }

        /// <summary>One thread that runs the tests one at a time, so that the main thread can give up on one that never ends.</summary>
        private sealed class Worker
        {
            private const int StackBytes = 16 << 20;
            private readonly AutoResetEvent _go = new AutoResetEvent(false);
            private readonly AutoResetEvent _done = new AutoResetEvent(false);
            private TestCase? _test;
            private string? _error;

            public Worker()
            {
                var thread = new Thread(Loop, StackBytes) { IsBackground = true, Name = "test" };
                thread.Start();
            }

            public bool TryRun(TestCase test, TimeSpan limit, out string? error)
            {
                _test = test;
                _go.Set();
                if (!_done.WaitOne(limit))
                {
                    error = null;
                    return false;
                }
                error = _error;
                return true;
            }

            private void Loop()
            {
                while (true)
                {
                    _go.WaitOne();
                    _error = Execute(_test!);
                    _done.Set();
                }
            }
        }

        private sealed class TestCase
        {
            public TestCase(string className, string name, Func<object> create, Func<object, object?[], object?> invoke, object?[] arguments, string? skip)
            {
                ClassName = className;
                Name = name;
                Create = create;
                Invoke = invoke;
                Arguments = arguments;
                Skip = skip;
            }

            public string ClassName { get; }
            public string Name { get; }
            public Func<object> Create { get; }
            public Func<object, object?[], object?> Invoke { get; }
            public object?[] Arguments { get; }
            public string? Skip { get; }
        }

        private sealed class Options
        {
            public bool ListClasses { get; private set; }
            public bool List { get; private set; }
            public List<string> Classes { get; } = new List<string>();
            public List<string> Substrings { get; } = new List<string>();
            public string? StartAfter { get; private set; }
            public int TimeLimitSeconds { get; private set; } = DefaultTimeLimitSeconds;
            public bool AotOnly { get; private set; }

            public bool Selects(TestCase test)
            {
                if (Classes.Count > 0 && !Classes.Contains(test.ClassName)) return false;
                return Substrings.Count == 0 || Substrings.Any(s => test.Name.IndexOf(s, StringComparison.Ordinal) >= 0);
            }

            public static Options Parse(string[] args)
            {
                var options = new Options();
                for (int i = 0; i < args.Length; i++)
                {
                    switch (args[i])
                    {
                        case "--list-classes": options.ListClasses = true; break;
                        case "--list": options.List = true; break;
                        case "--class": options.Classes.Add(Value(args, ref i)); break;
                        case "--start-after": options.StartAfter = Value(args, ref i); break;
                        case "--aot-only": options.AotOnly = true; break;
                        case "--time-limit":
                            if (!int.TryParse(Value(args, ref i), NumberStyles.None, CultureInfo.InvariantCulture, out int seconds) || seconds <= 0)
                                throw new ArgumentException("--time-limit takes a whole number of seconds greater than 0");
                            options.TimeLimitSeconds = seconds;
                            break;
                        default:
                            if (args[i].StartsWith("--", StringComparison.Ordinal)) throw new ArgumentException("unknown option " + args[i]);
                            options.Substrings.Add(args[i]);
                            break;
                    }
                }
                return options;
            }

            private static string Value(string[] args, ref int i)
            {
                if (i + 1 >= args.Length) throw new ArgumentException(args[i] + " needs a value");
                return args[++i];
            }
        }
    }
}

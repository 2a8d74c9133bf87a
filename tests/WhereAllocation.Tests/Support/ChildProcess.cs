using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Text;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Runs one test in a new process of this same runtime (the test assembly's own entry point: the suite runner,
    /// tests/Shared/SuiteRunner.cs), for a test whose failure could end its process: a library thread that dies of an
    /// exception ends the process on .NET and on Mono, and a suite that ended with it would report nothing after it. In the
    /// child the test runs as it would anywhere (<see cref="InChild"/> is true there); the parent asserts that the child ran
    /// it and passed, and shows the child's output when it did not (a crash included).
    /// </summary>
    public static class ChildProcess
    {
        private const string Variable = "WHEREALLOCATION_TEST_CHILD";

        /// <summary>True in a process that runs a test for its parent.</summary>
        public static bool InChild => Environment.GetEnvironmentVariable(Variable) == "1";

        /// <summary>
        /// True where a child is made: on Linux (CoreCLR, Mono, mono-boehm, full AOT). Under Wine a child would be a second
        /// Wine process for one test, and no library thread there has a crash path a child must contain (the watchdog runs on
        /// Linux only): there the test runs in its own process.
        /// </summary>
        public static bool Available => !RuntimeInformation.IsOSPlatform(OSPlatform.Windows);

        /// <summary>
        /// Runs the tests of <paramref name="testClass"/> whose name contains <paramref name="nameContains"/> (the suite runner's
        /// filter) in a child process, and asserts that exactly one ran and passed within <paramref name="seconds"/>.
        /// </summary>
        public static void AssertPasses(Type testClass, string nameContains, int seconds = 60)
        {
            Assert.True(Available, "no child process is made on " + Runtime.Describe());
            string assembly = testClass.Assembly.Location;
            string runtime = Process.GetCurrentProcess().MainModule!.FileName!;
            var arguments = new StringBuilder();
            if (Runtime.IsMono)
            {
                if (Runtime.CodeMadeAtRunTimeRefused) arguments.Append("--full-aot ");
                arguments.Append("--debug ");
            }
            else
            {
                arguments.Append("exec ");
            }
            arguments.Append('"').Append(assembly).Append("\" --class ").Append(testClass.FullName).Append(" --time-limit ").Append(seconds);
            if (Runtime.CodeMadeAtRunTimeRefused) arguments.Append(" --aot-only");
            arguments.Append(" \"").Append(nameContains).Append('"');
            var start = new ProcessStartInfo(runtime, arguments.ToString())
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            start.EnvironmentVariables[Variable] = "1";
            var output = new StringBuilder();
            using Process child = Process.Start(start)!;
            child.OutputDataReceived += (_, e) => { if (e.Data != null) lock (output) output.AppendLine(e.Data); };
            child.ErrorDataReceived += (_, e) => { if (e.Data != null) lock (output) output.AppendLine(e.Data); };
            child.BeginOutputReadLine();
            child.BeginErrorReadLine();
            bool ended = child.WaitForExit((seconds + 30) * 1000);
            if (!ended)
            {
                child.Kill();
                child.WaitForExit(10_000);
            }
            child.WaitForExit(); // the output's last lines
            string text;
            lock (output) text = output.ToString();
            string command = runtime + " " + arguments;
            Assert.True(ended, "the child process did not end within " + (seconds + 30) + " s (" + command + "):\n" + text);
            Assert.True(child.ExitCode == 0 && text.Contains(": 1 passed, 0 failed"),
                "the child process (" + command + ") ended with exit code " + child.ExitCode + ":\n" + text);
        }
    }
}

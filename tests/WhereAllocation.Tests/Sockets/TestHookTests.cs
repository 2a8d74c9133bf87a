using System.ComponentModel;
using System.Linq;
using System.Reflection;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The process-wide test and benchmark hooks stay callable but out of code completion
    /// ([EditorBrowsable(Never)]), and they are the only public members so hidden.
    /// </summary>
    public class TestHookTests
    {
        [Fact]
        public void OnlyTheTestHooksAreHiddenFromCodeCompletion()
        {
            string[] hidden = typeof(EndPointKey).Assembly.GetExportedTypes()
                .SelectMany(t => t.GetMembers(BindingFlags.Public | BindingFlags.Static | BindingFlags.Instance | BindingFlags.DeclaredOnly))
                .Where(m => m.GetCustomAttribute<EditorBrowsableAttribute>()?.State == EditorBrowsableState.Never)
                .Select(m => m.DeclaringType!.Name + "." + m.Name)
                .OrderBy(n => n, System.StringComparer.Ordinal)
                .ToArray();
            Assert.Equal(new[] { "DatagramPathSettings.Force", "DatagramPathSettings.Reset" }, hidden);
        }
    }
}

using System;
using System.Reflection;
using System.Reflection.Emit;

namespace WhereAllocation.FullAot
{
    /// <summary>
    /// Code that only a JIT can run, planted on purpose: scripts/no-jit.sh runs each mode once with the JIT
    /// (every mode runs) and once under <c>mono --full-aot</c>, where "unshareable" and "emit" must be refused, so
    /// that the stage is seen to refuse what IL2CPP and iOS refuse. Compiled by mcs in that script, never shipped.
    /// <list type="bullet">
    /// <item>"shareable": a generic method instantiated at run time over a value type, by <c>MakeGenericMethod</c>,
    /// whose body Mono can compile once for every value type (its shared generic code for value types). Mono's full
    /// AOT runs it; an AOT compiler without that sharing refuses it.</item>
    /// <item>"unshareable": the same over a body that shared code cannot express (<c>__makeref</c>), so the
    /// instantiation needs code of its own, made at run time: refused.</item>
    /// <item>"emit": a method made by Reflection.Emit (<c>DynamicMethod</c>) and called: refused.</item>
    /// </list>
    /// Prints "ran: mode" and exits 0, or "refused: ExceptionType: message" and exits 1.
    /// </summary>
    public static class RunTimeCode
    {
        /// <summary>A value type no code of this program instantiates a generic method over ahead of time.</summary>
        public struct Sample
        {
            public int Value;
        }

        public static string Shareable<T>(T value) => "shared " + typeof(T).Name;

        public static string Unshareable<T>(T value)
        {
            TypedReference reference = __makeref(value);
            return "own code for " + __reftype(reference).Name;
        }

        public static int Main(string[] args)
        {
            string mode = args.Length == 1 ? args[0] : "";
            try
            {
                string result;
                switch (mode)
                {
                    case "shareable": result = Instantiate("Shareable"); break;
                    case "unshareable": result = Instantiate("Unshareable"); break;
                    case "emit": result = Emitted(); break;
                    default:
                        Console.Error.WriteLine("usage: RunTimeCode.exe shareable|unshareable|emit");
                        return 2;
                }
                Console.WriteLine("ran: " + mode + " (" + result + ")");
                return 0;
            }
            catch (Exception e)
            {
                Exception thrown = e is TargetInvocationException wrapper && wrapper.InnerException != null ? wrapper.InnerException : e;
                Console.WriteLine("refused: " + thrown.GetType().FullName + ": " + thrown.Message);
                return 1;
            }
        }

        private static string Instantiate(string name)
        {
            MethodInfo method = typeof(RunTimeCode).GetMethod(name).MakeGenericMethod(typeof(Sample));
            return (string)method.Invoke(null, new object[] { new Sample { Value = 7 } });
        }

        private static string Emitted()
        {
            var method = new DynamicMethod("Seven", typeof(int), Type.EmptyTypes, typeof(RunTimeCode).Module);
            ILGenerator il = method.GetILGenerator();
            il.Emit(OpCodes.Ldc_I4_7);
            il.Emit(OpCodes.Ret);
            var seven = (Func<int>)method.CreateDelegate(typeof(Func<int>));
            return "emitted method returned " + seven();
        }
    }
}

#!/usr/bin/env bash
# The trim check standing in for Unity's managed code stripping: links samples/TrimCheck, the netstandard2.1
# library and Mono's class libraries (mscorlib, System, ...) with ILLink, every assembly linked (as Unity's "High"
# stripping level does), and runs the output on Mono with MONO_PATH at the linked folder, so Mono loads the linked
# class libraries (the program proves it: a type the link removed is absent at run time). Stages:
#   shipped           the package's link.xml passed to the linker as Unity passes link.xml files: the getter stays
#   no link.xml       the library's own dependency attribute alone keeps Socket.get_SafeHandle
#   getter stripped   the library's lookup finds no getter (as after a linker removed it) and the runtime's getter is
#                     a stub: the native path stays, through the field that holds the handle
#   getter stubbed    only the runtime's getter is replaced by the linker's throwing stub: the first call moves to the field
# Each stage asserts the native path, 0 B per receive, per send, per batch of 16 each way and per awaited receive that
# waits over 10 000 calls, ObjectDisposedException on a disposed socket (to an await in progress too), and that the
# Managed path never asks for SocketFlags.Truncated. The getter-stripped and getter-stubbed stages run all of it on the
# field route (its cost per datagram: bench/ReceiveCost, the field form). Last, the library names its C library
# "__Internal" when compiled as Unity compiles the package for a statically linked (iOS) player, except for the
# Linux-only calls, and "libc" otherwise.
# Ends with one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0; failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); echo "  ok   $2"; else failed=$((failed + 1)); echo "  FAIL $2"; fi; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; exit $?; }

if ! dotnet build samples/TrimCheck -c Release -nologo -v quiet >"$work/build.txt" 2>&1; then
  cat "$work/build.txt"; check 1 "samples/TrimCheck builds"; finish
fi
app=samples/TrimCheck/bin/Release/netstandard2.1

# ILLink comes with the .NET SDK's trimming support: the library's net8.0 build (IsAotCompatible) restores it.
packages=$(dotnet msbuild src/WhereAllocation -getProperty:NuGetPackageRoot 2>/dev/null | tr -d '[:space:]')
illink=$(ls -d "${packages%/}"/microsoft.net.illink.tasks/*/tools/net8.0/illink.dll 2>/dev/null | sort -V | tail -1)
[ -n "$illink" ] && [ -f "$illink" ]; check $? "ILLink found (${illink:-none under $packages})"
mono_lib=$(dirname "$(readlink -f "$(command -v mono)")")/../lib/mono/4.5
[ -f "$mono_lib/System.dll" ]; check $? "Mono's class libraries found ($mono_lib)"
[ "$failed" -eq 0 ] || finish

# Mono 6.8 embeds in mscorlib the list of members its runtime needs (mscorlib.xml), written for the older linker:
# ILLink 8 refuses its feature="..." conditions (IL1001). Embedded lists are therefore ignored and this one is
# passed as a file with the conditions removed (everything it names is kept), as a linker for Mono must.
(cd "$work" && monodis --mresources "$mono_lib/mscorlib.dll" >/dev/null 2>&1)
sed -E 's/ feature="[a-z]+"//g' "$work/mscorlib.xml" >"$work/runtime-needs.xml" 2>/dev/null
grep -q "<linker" "$work/runtime-needs.xml"; check $? "Mono's runtime member list extracted from mscorlib"

# ILLink substitutions that emulate a linker removing the getter: "remove" on a member something keeps leaves the
# linker's stub that throws NotSupportedException; "stub" makes the library's lookup return null, as it does when
# the getter is gone.
cat >"$work/stub-runtime-getter.xml" <<'XML'
<linker>
  <assembly fullname="System">
    <type fullname="System.Net.Sockets.Socket">
      <method signature="System.Runtime.InteropServices.SafeHandle get_SafeHandle()" body="remove" />
    </type>
  </assembly>
</linker>
XML
cat >"$work/strip-getter.xml" <<'XML'
<linker>
  <assembly fullname="System">
    <type fullname="System.Net.Sockets.Socket">
      <method signature="System.Runtime.InteropServices.SafeHandle get_SafeHandle()" body="remove" />
    </type>
  </assembly>
  <assembly fullname="WhereAllocation">
    <type fullname="WhereAllocation.SocketHandles">
      <method signature="System.Func`2&lt;System.Net.Sockets.Socket,System.Runtime.InteropServices.SafeHandle&gt; CreateGetter()" body="stub" />
    </type>
  </assembly>
</linker>
XML

# A type of the installed class library that a link removed: the linked library must lack it at run time.
removed_type() {
  comm -23 <(monodis --typedef "$mono_lib/$1" | awk '{print $2}' | grep -E '^System\.[A-Za-z.]+$' | sort) \
           <(monodis --typedef "$2/$1" | awk '{print $2}' | sort) | head -1
}

stage() {
  local name=$1 access=$2; shift 2
  local out="$work/$name"
  echo "== $name"
  dotnet "$illink" -a "$app/TrimCheck.dll" -d "$app" -d "$mono_lib" -d "$mono_lib/Facades" --action link \
    --ignore-descriptors true -x "$work/runtime-needs.xml" --notrimwarn -out "$out" "$@" >"$work/$name.txt" 2>&1
  check $? "$name: ILLink links the program, the library and the class libraries"
  [ -f "$out/System.dll" ] && [ -f "$out/mscorlib.dll" ] || { tail -20 "$work/$name.txt"; return; }
  local sys_type corlib_type
  sys_type=$(removed_type System.dll "$out"); corlib_type=$(removed_type mscorlib.dll "$out")
  [ -n "$sys_type" ] && [ -n "$corlib_type" ]; check $? "$name: the link removed types from System.dll ($sys_type) and mscorlib.dll ($corlib_type)"
  MONO_PATH="$out" mono "$out/TrimCheck.dll" --access "$access" --absent "$sys_type" --absent "$corlib_type" | tee "$work/$name.run.txt"
  check "${PIPESTATUS[0]}" "$name: the linked program passes on Mono (native path, 0 B, ObjectDisposedException, $access)"
}

getter_in() { monodis "$1/System.dll" 2>/dev/null | grep -c "end of method Socket::get_SafeHandle"; }

stage shipped SafeHandleProperty -x src/WhereAllocation/link.xml
stage no-link-xml SafeHandleProperty
[ "$(getter_in "$work/no-link-xml")" = 1 ]; check $? "no link.xml: the linked System.dll still has Socket.get_SafeHandle"
stage getter-stripped SafeHandleField --substitutions "$work/strip-getter.xml"
stage getter-stubbed SafeHandleField --substitutions "$work/stub-runtime-getter.xml"

echo "== native library names"
implmap() { monodis --implmap "$1" 2>/dev/null; }
shipped_map=$(implmap artifacts/bin/WhereAllocation/Release/netstandard2.1/WhereAllocation.dll)
[ "$(grep -c ' libc)$' <<<"$shipped_map")" -ge 10 ] && ! grep -q '__Internal' <<<"$shipped_map"
check $? "the shipped netstandard2.1 build names \"libc\" for every C library call"
if dotnet build src/WhereAllocation -c Release -f netstandard2.1 -p:UnityDefines=UNITY_IOS -o "$work/ios" \
     --artifacts-path "$work/ios-artifacts" -nologo -v quiet >"$work/ios.txt" 2>&1; then
  ios_map=$(implmap "$work/ios/WhereAllocation.dll")
  linux_only='::(RecvMMsg|SendMMsg|RecvMsg|SchedSetAffinity|EpollCreate1|EpollCtl|EpollWait)\('
  ! grep 'Interop.Libc::' <<<"$ios_map" | grep -v -E "$linux_only" | grep -v -q '__Internal)$'
  check $? "compiled as for a Unity iOS player: every call Apple's C library has names \"__Internal\" (linked statically)"
  [ "$(grep -E "$linux_only" <<<"$ios_map" | grep -c ' libc)$')" = 7 ]
  check $? "compiled as for a Unity iOS player: the Linux-only recvmmsg, sendmmsg, recvmsg (with Linux's msghdr), sched_setaffinity and epoll calls still name \"libc\" (no symbol Apple lacks in the link)"
else
  cat "$work/ios.txt"; check 1 "the library compiles with UNITY_IOS defined"
fi
finish

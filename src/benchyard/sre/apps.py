"""The applications the simulator can run: their services, call graph, workloads, configuration
and the cluster around them. Plain data; `world.py` turns one into a cluster at a moment.

- `otel-demo`: the OpenTelemetry demo shop (namespace otel-demo), as ITBench deploys it.
- `bookinfo`: Istio's Bookinfo (namespace book-info) behind a gateway, in ambient mode.
- `ledger`: a small payments back office written for benchyard's own `sre-starter` incidents.
"""

# ruff: noqa: E501  (log lines, event messages and fixtures are quoted whole)

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    """A synchronous dependency: the callee, the share of the caller's requests that call it, and
    whether a failure of the call fails the caller's request (else the caller degrades quietly)."""

    service: str
    share: float = 1.0
    critical: bool = True


@dataclass(frozen=True)
class ServiceDef:
    name: str
    style: (
        str  # how its logs look: go, java, dotnet, node, python, rust, cpp, ruby, php, envoy, ...
    )
    port: int
    operations: tuple[str, ...]
    calls: tuple[Call, ...] = ()
    consumes: tuple[str, ...] = ()  # queues it reads (asynchronous)
    publishes: tuple[str, ...] = ()
    deployments: tuple[str, ...] = ()  # default: one named like the service
    replicas: int = 1
    image: str = ""
    env: tuple[tuple[str, str], ...] = ()
    configmaps: tuple[str, ...] = ()  # mounted or read
    secrets: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()  # feature flags it evaluates (through flagd)
    rps: float = 5.0  # requests per second at rest
    latency_ms: float = 20.0  # p50 at rest
    cpu_limit: float = 0.5  # cores
    memory_limit_mb: int = 256
    cpu_rest: float = 0.05  # cores used at rest
    memory_rest_mb: int = 80
    infra: bool = False  # part of the platform (collector, database, queue), not a business service

    @property
    def workloads(self) -> tuple[str, ...]:
        return self.deployments or (self.name,)


@dataclass(frozen=True)
class AppDef:
    name: str
    namespace: str
    entrypoint: str  # where user traffic enters (the root of most traces)
    services: tuple[ServiceDef, ...]
    configmaps: dict[str, dict[str, str]] = field(default_factory=dict)
    secrets: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name -> keys
    labels: dict[str, str] = field(default_factory=dict)  # the namespace's labels
    mesh: bool = False  # Istio (gateway, peer authentication)

    def service(self, name: str) -> ServiceDef | None:
        return next((s for s in self.services if s.name == name), None)

    def service_of_workload(self, workload: str) -> ServiceDef | None:
        return next((s for s in self.services if workload in s.workloads), None)

    def callers_of(self, name: str) -> list[ServiceDef]:
        return [s for s in self.services if any(c.service == name for c in s.calls)]


OTEL_IMAGE = "ghcr.io/open-telemetry/demo:2.0.2-{}"
FLAGD_JSON = """{
  "$schema": "https://flagd.dev/schema/v0/flags.json",
  "flags": {
%s
  }
}"""
OTEL_FLAGS = (
    ("productCatalogFailure", "Fail product catalog service on a specific product"),
    ("recommendationCacheFailure", "Fail recommendation service cache"),
    ("adManualGc", "Triggers full manual garbage collections in the ad service"),
    ("adHighCpu", "Triggers high cpu load in the ad service"),
    ("adFailure", "Fail ad service"),
    (
        "kafkaQueueProblems",
        "Overloads Kafka queue while simultaneously introducing a consumer side delay",
    ),
    ("cartFailure", "Fail cart service"),
    ("paymentFailure", "Fail payment service charge requests n%"),
    ("paymentUnreachable", "Payment service is unavailable"),
    ("loadGeneratorFloodHomepage", "Flood the frontend with a large amount of requests."),
    ("imageSlowLoad", "slow loading images in the frontend"),
)


def flagd_document(enabled: dict[str, str]) -> str:
    """demo.flagd.json with every flag off except `enabled` (flag -> variant)."""
    entries = []
    for flag, description in OTEL_FLAGS:
        variant = enabled.get(flag, "off")
        entries.append(
            f'    "{flag}": {{\n      "description": "{description}",\n      "state": "ENABLED",\n'
            f'      "variants": {{\n        "on": true,\n        "off": false\n      }},\n'
            f'      "defaultVariant": "{variant}"\n    }}'
        )
    return FLAGD_JSON % ",\n".join(entries)


def _otel(
    name: str, style: str, operations: tuple[str, ...], port: int = 8080, **extra: Any
) -> ServiceDef:
    return ServiceDef(
        name=name,
        style=style,
        port=port,
        operations=operations,
        image=OTEL_IMAGE.format(name),
        **extra,
    )


OTEL_DEMO = AppDef(
    name="otel-demo",
    namespace="otel-demo",
    entrypoint="frontend-proxy",
    labels={"kubernetes.io/metadata.name": "otel-demo"},
    services=(
        _otel(
            "frontend-proxy",
            "envoy",
            ("GET /", "GET /api/products", "GET /api/cart", "POST /api/checkout", "GET /images"),
            calls=(Call("frontend", 0.85), Call("image-provider", 0.15)),
            rps=40.0,
            latency_ms=35.0,
            cpu_limit=0.5,
        ),
        _otel(
            "frontend",
            "node",
            ("GET /", "GET /api/products", "GET /api/cart", "POST /api/cart", "POST /api/checkout"),
            calls=(
                Call("product-catalog", 0.7),
                Call("currency", 0.6),
                Call("cart", 0.35),
                Call("recommendation", 0.3, critical=False),
                Call("ad", 0.3, critical=False),
                Call("shipping", 0.1),
                Call("checkout", 0.08),
                Call("flagd", 0.05, critical=False),
            ),
            env=(
                ("PRODUCT_CATALOG_ADDR", "product-catalog:8080"),
                ("CURRENCY_ADDR", "currency:8080"),
                ("CART_ADDR", "cart:8080"),
                ("RECOMMENDATION_ADDR", "recommendation:8080"),
                ("AD_ADDR", "ad:8080"),
                ("SHIPPING_ADDR", "http://shipping:8080"),
                ("CHECKOUT_ADDR", "checkout:8080"),
                ("FLAGD_HOST", "flagd"),
            ),
            rps=34.0,
            latency_ms=60.0,
            cpu_limit=1.0,
            memory_limit_mb=512,
            cpu_rest=0.2,
            memory_rest_mb=210,
        ),
        _otel(
            "ad",
            "java",
            ("oteldemo.AdService/GetAds",),
            calls=(Call("flagd", 1.0, critical=False),),
            flags=("adFailure", "adManualGc", "adHighCpu"),
            env=(("AD_PORT", "8080"), ("FLAGD_HOST", "flagd")),
            rps=10.0,
            latency_ms=8.0,
            memory_limit_mb=400,
            memory_rest_mb=250,
        ),
        _otel(
            "cart",
            "dotnet",
            (
                "oteldemo.CartService/GetCart",
                "oteldemo.CartService/AddItem",
                "oteldemo.CartService/EmptyCart",
            ),
            calls=(Call("valkey-cart", 1.0), Call("flagd", 0.3, critical=False)),
            flags=("cartFailure",),
            env=(("VALKEY_ADDR", "valkey-cart:6379"), ("FLAGD_HOST", "flagd")),
            rps=12.0,
            latency_ms=6.0,
            memory_limit_mb=160,
            memory_rest_mb=95,
        ),
        _otel(
            "checkout",
            "go",
            ("oteldemo.CheckoutService/PlaceOrder",),
            calls=(
                Call("cart", 1.0),
                Call("product-catalog", 1.0),
                Call("currency", 1.0),
                Call("shipping", 1.0),
                Call("payment", 1.0),
                Call("email", 1.0, critical=False),
                Call("kafka", 1.0, critical=False),
                Call("flagd", 1.0, critical=False),
            ),
            publishes=("orders",),
            env=(
                ("CART_ADDR", "cart:8080"),
                ("CURRENCY_ADDR", "currency:8080"),
                ("EMAIL_ADDR", "http://email:8080"),
                ("PAYMENT_ADDR", "payment:8080"),
                ("PRODUCT_CATALOG_ADDR", "product-catalog:8080"),
                ("SHIPPING_ADDR", "http://shipping:8080"),
                ("KAFKA_ADDR", "kafka:9092"),
                ("FLAGD_HOST", "flagd"),
            ),
            flags=("kafkaQueueProblems",),
            rps=2.5,
            latency_ms=180.0,
            memory_limit_mb=64,
            memory_rest_mb=28,
        ),
        _otel("currency", "cpp", ("oteldemo.CurrencyService/Convert",), rps=30.0, latency_ms=2.0),
        _otel(
            "email",
            "ruby",
            ("POST /send_order_confirmation",),
            secrets=("email-service-secret",),
            rps=2.5,
            latency_ms=45.0,
            memory_limit_mb=100,
        ),
        _otel(
            "payment",
            "node",
            ("oteldemo.PaymentService/Charge",),
            calls=(Call("flagd", 1.0, critical=False),),
            flags=("paymentFailure", "paymentUnreachable"),
            rps=2.5,
            latency_ms=15.0,
            memory_limit_mb=120,
        ),
        _otel(
            "product-catalog",
            "go",
            (
                "oteldemo.ProductCatalogService/ListProducts",
                "oteldemo.ProductCatalogService/GetProduct",
            ),
            calls=(Call("flagd", 0.5, critical=False),),
            configmaps=("product-catalog-products",),
            flags=("productCatalogFailure",),
            rps=45.0,
            latency_ms=3.0,
            memory_limit_mb=20,
            memory_rest_mb=12,
        ),
        _otel("quote", "php", ("POST /getquote",), rps=3.0, latency_ms=12.0, memory_limit_mb=40),
        _otel(
            "recommendation",
            "python",
            ("oteldemo.RecommendationService/ListRecommendations",),
            calls=(Call("product-catalog", 1.0), Call("flagd", 1.0, critical=False)),
            flags=("recommendationCacheFailure",),
            env=(("PRODUCT_CATALOG_ADDR", "product-catalog:8080"),),
            rps=10.0,
            latency_ms=12.0,
            memory_limit_mb=500,
            memory_rest_mb=130,
        ),
        _otel(
            "shipping",
            "rust",
            ("oteldemo.ShippingService/GetQuote", "oteldemo.ShippingService/ShipOrder"),
            calls=(Call("quote", 1.0),),
            env=(("QUOTE_ADDR", "http://quote:8080"),),
            rps=4.0,
            latency_ms=20.0,
            memory_limit_mb=20,
            memory_rest_mb=9,
        ),
        _otel(
            "image-provider",
            "nginx",
            ("GET /static/images",),
            port=8081,
            calls=(Call("flagd", 0.1, critical=False),),
            flags=("imageSlowLoad",),
            rps=6.0,
            latency_ms=4.0,
            memory_limit_mb=50,
        ),
        _otel(
            "kafka",
            "kafka",
            ("produce orders", "fetch orders"),
            port=9092,
            rps=5.0,
            latency_ms=3.0,
            memory_limit_mb=1024,
            memory_rest_mb=610,
            infra=True,
        ),
        _otel(
            "accounting",
            "dotnet",
            ("orders process",),
            consumes=("orders",),
            calls=(Call("postgresql", 1.0),),
            env=(
                ("KAFKA_ADDR", "kafka:9092"),
                ("DB_CONNECTION_STRING", "Host=postgresql;Username=otelu;Database=otel"),
            ),
            rps=2.5,
            latency_ms=9.0,
            memory_limit_mb=120,
        ),
        _otel(
            "fraud-detection",
            "java",
            ("orders process",),
            consumes=("orders",),
            calls=(Call("flagd", 1.0, critical=False),),
            env=(("KAFKA_ADDR", "kafka:9092"),),
            rps=2.5,
            latency_ms=5.0,
            memory_limit_mb=300,
            memory_rest_mb=190,
        ),
        _otel(
            "valkey-cart",
            "redis",
            ("GET", "HSET", "EXPIRE"),
            port=6379,
            rps=20.0,
            latency_ms=0.4,
            memory_limit_mb=20,
            memory_rest_mb=6,
            infra=True,
        ),
        _otel(
            "postgresql",
            "postgres",
            ("INSERT orders", "INSERT shipping"),
            port=5432,
            rps=5.0,
            latency_ms=1.5,
            memory_limit_mb=200,
            memory_rest_mb=70,
            infra=True,
        ),
        _otel(
            "flagd",
            "flagd",
            ("flagd.evaluation.v1.Service/ResolveBoolean",),
            port=8013,
            configmaps=("flagd-config",),
            rps=15.0,
            latency_ms=1.0,
            memory_limit_mb=75,
            infra=True,
        ),
        _otel(
            "load-generator",
            "locust",
            ("locust",),
            port=8089,
            calls=(
                Call("frontend-proxy", 1.0, critical=False),
                Call("flagd", 0.05, critical=False),
            ),
            flags=("loadGeneratorFloodHomepage",),
            env=(("LOCUST_USERS", "10"), ("LOCUST_HOST", "http://frontend-proxy:8080")),
            rps=0.0,
            latency_ms=0.0,
            memory_limit_mb=1500,
            memory_rest_mb=300,
        ),
        _otel(
            "otel-collector",
            "collector",
            ("opentelemetry.proto.collector.trace.v1.TraceService/Export",),
            port=4317,
            rps=60.0,
            latency_ms=1.0,
            memory_limit_mb=200,
            memory_rest_mb=120,
            infra=True,
        ),
    ),
    configmaps={
        "flagd-config": {"demo.flagd.json": flagd_document({})},
        "product-catalog-products": {
            "products.json": '{"products": [{"id": "OLJCESPC7Z", "name": "National Park Foundation Explorascope"}, {"id": "66VCHSJNUP", "name": "Starsense Explorer Refractor Telescope"}, {"id": "1YMWWN1N4O", "name": "Eclipsmart Travel Refractor Telescope"}, {"id": "L9ECAV7KIM", "name": "Lens Cleaning Kit"}]}'
        },
        "otel-collector": {
            "relay": "receivers:\n  otlp:\n    protocols:\n      grpc: {}\n      http: {}\nexporters:\n  otlp:\n    endpoint: jaeger-collector:4317\n"
        },
        "grafana-dashboards": {"demo-dashboard.json": '{"title": "Demo Dashboard", "panels": 14}'},
    },
    secrets={"email-service-secret": ("smtp-username", "smtp-password")},
)

BOOKINFO = AppDef(
    name="bookinfo",
    namespace="book-info",
    entrypoint="bookinfo-gateway-istio",
    mesh=True,
    labels={"kubernetes.io/metadata.name": "book-info", "istio.io/dataplane-mode": "ambient"},
    services=(
        ServiceDef(
            "bookinfo-gateway-istio",
            "envoy",
            80,
            ("GET /productpage", "GET /api/v1/products"),
            calls=(Call("productpage", 1.0),),
            image="docker.io/istio/proxyv2:1.24.2",
            rps=12.0,
            latency_ms=25.0,
            infra=True,
        ),
        ServiceDef(
            "productpage",
            "python",
            9080,
            ("GET /productpage", "GET /api/v1/products"),
            calls=(Call("details", 1.0), Call("reviews", 1.0)),
            deployments=("productpage-v1",),
            image="docker.io/istio/examples-bookinfo-productpage-v1:1.20.2",
            env=(("DETAILS_HOSTNAME", "details"), ("REVIEWS_HOSTNAME", "reviews")),
            rps=12.0,
            latency_ms=22.0,
            memory_limit_mb=200,
        ),
        ServiceDef(
            "details",
            "ruby",
            9080,
            ("GET /details",),
            deployments=("details-v1",),
            image="docker.io/istio/examples-bookinfo-details-v1:1.20.2",
            rps=12.0,
            latency_ms=3.0,
        ),
        ServiceDef(
            "reviews",
            "java",
            9080,
            ("GET /reviews",),
            calls=(Call("ratings", 0.66),),
            deployments=("reviews-v1", "reviews-v2", "reviews-v3"),
            image="docker.io/istio/examples-bookinfo-reviews-v2:1.20.2",
            rps=12.0,
            latency_ms=9.0,
            memory_limit_mb=600,
            memory_rest_mb=330,
        ),
        ServiceDef(
            "ratings",
            "node",
            9080,
            ("GET /ratings",),
            deployments=("ratings-v1",),
            image="docker.io/istio/examples-bookinfo-ratings-v1:1.20.2",
            rps=8.0,
            latency_ms=2.0,
        ),
    ),
)

LEDGER = AppDef(
    name="ledger",
    namespace="ledger",
    entrypoint="api-gateway",
    labels={"kubernetes.io/metadata.name": "ledger", "team": "payments"},
    services=(
        ServiceDef(
            "api-gateway",
            "envoy",
            8080,
            ("POST /v1/transfers", "GET /v1/accounts", "GET /v1/statements"),
            calls=(Call("web-api", 1.0),),
            image="envoyproxy/envoy:v1.31.2",
            rps=25.0,
            latency_ms=30.0,
        ),
        ServiceDef(
            "web-api",
            "python",
            8000,
            ("POST /v1/transfers", "GET /v1/accounts", "GET /v1/statements"),
            calls=(
                Call("auth", 1.0),
                Call("accounts", 0.8),
                Call("ledger", 0.45),
                Call("fx-rates", 0.2),
                Call("notifications", 0.3, critical=False),
            ),
            env=(
                ("AUTH_URL", "http://auth:8080"),
                ("ACCOUNTS_URL", "http://accounts:8080"),
                ("LEDGER_URL", "http://ledger:8080"),
                ("FX_URL", "http://fx-rates:8080"),
                ("NOTIFY_URL", "http://notifications:8080"),
            ),
            configmaps=("web-api-config",),
            image="registry.internal/ledger/web-api:4.12.0",
            rps=25.0,
            latency_ms=55.0,
            memory_limit_mb=512,
            memory_rest_mb=240,
            replicas=2,
        ),
        ServiceDef(
            "auth",
            "go",
            8080,
            ("POST /token/verify",),
            calls=(Call("redis-sessions", 1.0),),
            env=(("REDIS_ADDR", "redis-sessions:6379"),),
            secrets=("auth-signing-key",),
            image="registry.internal/ledger/auth:2.3.1",
            rps=25.0,
            latency_ms=4.0,
        ),
        ServiceDef(
            "accounts",
            "go",
            8080,
            ("GET /accounts/{id}", "POST /accounts/{id}/hold"),
            calls=(Call("postgres-ledger", 1.0),),
            env=(("DATABASE_URL", "postgres://accounts@postgres-ledger:5432/ledger"),),
            secrets=("postgres-credentials",),
            image="registry.internal/ledger/accounts:1.19.4",
            rps=20.0,
            latency_ms=8.0,
        ),
        ServiceDef(
            "ledger",
            "java",
            8080,
            ("POST /entries", "GET /statements/{account}"),
            calls=(Call("postgres-ledger", 1.0), Call("rabbitmq", 0.6, critical=False)),
            publishes=("statements",),
            env=(("DB_HOST", "postgres-ledger"), ("AMQP_URL", "amqp://rabbitmq:5672")),
            configmaps=("ledger-config",),
            secrets=("postgres-credentials",),
            image="registry.internal/ledger/ledger:7.2.0",
            rps=11.0,
            latency_ms=25.0,
            memory_limit_mb=768,
            memory_rest_mb=420,
        ),
        ServiceDef(
            "fx-rates",
            "python",
            8080,
            ("GET /rates",),
            configmaps=("fx-rates-config",),
            image="registry.internal/ledger/fx-rates:0.9.3",
            rps=5.0,
            latency_ms=6.0,
        ),
        ServiceDef(
            "notifications",
            "node",
            8080,
            ("POST /notify",),
            secrets=("smtp-relay",),
            image="registry.internal/ledger/notifications:3.0.7",
            rps=7.0,
            latency_ms=35.0,
        ),
        ServiceDef(
            "statement-worker",
            "python",
            8080,
            ("statements process",),
            consumes=("statements",),
            calls=(Call("postgres-ledger", 1.0),),
            image="registry.internal/ledger/statement-worker:1.4.0",
            rps=6.0,
            latency_ms=40.0,
        ),
        ServiceDef(
            "postgres-ledger",
            "postgres",
            5432,
            ("SELECT", "INSERT"),
            deployments=("postgres-ledger",),
            image="postgres:16.4",
            rps=40.0,
            latency_ms=1.2,
            memory_limit_mb=1024,
            memory_rest_mb=380,
            infra=True,
        ),
        ServiceDef(
            "redis-sessions",
            "redis",
            6379,
            ("GET", "SET"),
            image="redis:7.4",
            rps=25.0,
            latency_ms=0.3,
            memory_limit_mb=128,
            memory_rest_mb=30,
            infra=True,
        ),
        ServiceDef(
            "rabbitmq",
            "rabbitmq",
            5672,
            ("publish statements", "deliver statements"),
            image="rabbitmq:3.13",
            rps=7.0,
            latency_ms=1.0,
            memory_limit_mb=512,
            memory_rest_mb=160,
            infra=True,
        ),
    ),
    configmaps={
        "web-api-config": {
            "settings.toml": "[server]\nworkers = 8\ntimeout_sec = 5\n[features]\nnew_statement_api = false\n"
        },
        "ledger-config": {
            "application.yaml": "db:\n  pool:\n    maxSize: 20\n    timeoutMs: 3000\nstatements:\n  batchSize: 200\n"
        },
        "fx-rates-config": {"rates.yaml": "refresh_sec: 300\nprovider: ecb\n"},
    },
    secrets={
        "postgres-credentials": ("username", "password"),
        "auth-signing-key": ("jwks.json",),
        "smtp-relay": ("host", "username", "password"),
    },
)

APPS = {app.name: app for app in (OTEL_DEMO, BOOKINFO, LEDGER)}

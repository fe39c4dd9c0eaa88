"""Top-level URLs: the warehouse UI, admin, REST API v1, OpenAPI schema and docs, i18n,
and the operational endpoints /healthz and /metrics."""

from django.contrib import admin
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

from config import api_docs, health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("metrics", health.metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("notifications.api.urls")),
    path("api/v1/", include("messaging.api.urls")),
    path("api/v1/", include("push.api.urls")),
    path("api/v1/", include("shifts.api.urls")),
    path("api/v1/", include("actions.api.urls")),
    path("api/v1/", include("notices.api.urls")),
    path("api/v1/", include("delivery.api.urls")),
    path("api/v1/", include("quiet.api.urls")),
    # Signed-in users only when DEBUG is off, unless API_DOCS_PUBLIC (config/api_docs.py).
    path("api/schema/", api_docs.SchemaView.as_view(), name="schema"),
    path("api/docs/", api_docs.DocsView.as_view(url_name="schema"), name="api-docs"),
    path("inventory/", include("inventory.urls")),  # the demo WMS's webhook (SPEC 14)
    path("i18n/", include("django.conf.urls.i18n")),  # set_language, for the switcher
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("", include("web.urls")),
]

handler400 = "config.views.bad_request"
handler404 = "config.views.not_found"
handler500 = "config.views.server_error"

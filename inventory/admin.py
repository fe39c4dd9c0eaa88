"""Admin of the demo bins: edit stock by hand, or run a pick wave on selected bins."""

from __future__ import annotations

from collections import defaultdict

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.text import format_lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from . import services
from .models import Bin, ReplenishmentTask

DEMO_PICK = 10


class NegativeStockFilter(admin.SimpleListFilter):
    title = _("stock")
    parameter_name = "stock"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [("negative", _("Negative (needs replenishment)")), ("ok", _("Zero or more"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "negative":
            return queryset.filter(stock__lt=0)
        if self.value() == "ok":
            return queryset.filter(stock__gte=0)
        return queryset


@admin.action(
    description=format_lazy(_("Pick wave: take {count} from each selected bin"), count=DEMO_PICK),
    permissions=["change"],
)
def pick_wave(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
    by_warehouse: dict[int, dict[str, int]] = defaultdict(dict)
    for warehouse_id, code in queryset.values_list("warehouse_id", "code"):
        by_warehouse[warehouse_id][code] = DEMO_PICK
    for warehouse_id, picks in by_warehouse.items():
        wave = services.run_pick_wave(warehouse=warehouse_id, picks=picks)
        negative = ", ".join(wave.negative) or gettext("none")
        modeladmin.message_user(
            request,
            gettext("Wave %(number)d: picked from %(count)d bins; negative now: %(negative)s.")
            % {"number": wave.number, "count": len(picks), "negative": negative},
            messages.SUCCESS,
        )


@admin.register(Bin)
class BinAdmin(admin.ModelAdmin):
    list_display = ["code", "warehouse", "stock", "last_wave", "updated_at"]
    list_editable = ["stock"]
    list_filter = [NegativeStockFilter, "warehouse"]
    search_fields = ["code", "warehouse__code"]
    list_select_related = ["warehouse"]
    autocomplete_fields = ["warehouse"]
    actions = [pick_wave]


@admin.register(ReplenishmentTask)
class ReplenishmentTaskAdmin(admin.ModelAdmin):
    """What the demo WMS made when operators pressed "Replenishment task created"."""

    list_display = ["__str__", "warehouse", "bin_code", "quantity", "requested_by", "created_at"]
    list_filter = ["warehouse"]
    search_fields = ["bin_code", "requested_by", "run_id", "notification_id"]
    readonly_fields = [f.name for f in ReplenishmentTask._meta.fields]

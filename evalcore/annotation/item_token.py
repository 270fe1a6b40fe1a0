"""A label is bound to the item the annotator saw: the item token and the checked write.

Every render of an item to label produces an :class:`ItemToken`: the study,
query and unit on screen, who looks at it, the newest label event on the unit
the screen reflects (``seen_event``), and a per-session *showing* number that
changes whenever another item (or the same item in a newer state) is put on
screen. A grade action carries the token of the item it was pressed on.

:func:`label_as_shown` writes the label only if

1. the token is the one on screen for that annotator now (``on_screen``, kept by
   the caller per session): a key press that reaches the server after the screen
   moved on carries an older token and is refused (:class:`OffScreenError`);
2. nobody labeled the unit since it was shown: checked inside the write
   transaction (:class:`evalcore.store.labels.ItemChangedError` lists the newer
   labels, so the page can show them and ask before writing over them).

Otherwise nothing is written. The label goes to the token's query and unit,
never to whatever the session shows later.
"""

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.contract.frozen import FrozenModel
from evalcore.store import labels
from evalcore.store.completeness import is_complete
from evalcore.store.drafts import clear_draft
from evalcore.store.labels import LabelEvent, latest_event_id
from evalcore.store.resolution import resolve_unit_in_store
from evalcore.store.study_handle import Study, open_study


class ItemToken(FrozenModel):
    """What one screen showed: the item and the label state it reflected."""

    study_id: str
    query_id: str
    unit_id: str
    annotator: str
    #: newest label event on the unit when it was shown (0: none)
    seen_event: int
    #: per-session number of this showing (a new item or a newer state gets a new one)
    showing: int


class OffScreenError(Exception):
    """The key press was for an item that is no longer the one on screen: nothing written."""

    def __init__(self, token: ItemToken, on_screen: ItemToken | None) -> None:
        self.token = token
        self.on_screen = on_screen
        super().__init__(
            f"it reached the server after {token.unit_id} had left the screen "
            "(look at the item shown now and press again)"
        )


class LabelOutcome(FrozenModel):
    """What a label did, for the page to say where it happened."""

    event: LabelEvent
    #: the query was marked complete and this relevant label reopened it
    reopened: bool
    #: the unit is now in conflict (annotators disagree, or a newer label contradicts
    #: an adjudication): it needs a reviewer
    in_conflict: bool
    #: the other annotators' current gains on the unit when it is in conflict
    conflict_with: dict[str, int]


def require_on_screen(token: ItemToken, on_screen: ItemToken | None) -> None:
    """Raise :class:`OffScreenError` unless ``token`` is the item on screen now."""
    if token != on_screen:
        raise OffScreenError(token, on_screen)


def show_item(
    study: Study,
    *,
    query_id: str,
    unit_id: str,
    annotator: str,
    previous: ItemToken | None = None,
) -> ItemToken:
    """The token of the item about to be rendered to ``annotator``, read through the page's
    handle.

    Keeps ``previous``'s showing number when it is the same item in the same
    state (a re-render of an unchanged screen); otherwise the next number.
    """
    token = ItemToken(study_id=study.study_id, query_id=query_id, unit_id=unit_id,
                      annotator=annotator, seen_event=latest_event_id(study, query_id, unit_id),
                      showing=previous.showing if previous is not None else 1)
    if previous is None:
        return token
    return previous if token == previous else token.model_copy(
        update={"showing": previous.showing + 1})


def label_as_shown(
    db: sqlite_utils.Database,
    token: ItemToken,
    gain: int,
    *,
    on_screen: ItemToken | None,
    check_screen: bool = True,
    note: str = "",
    source: str = "app",
) -> LabelOutcome:
    """Write the annotator's ``gain`` for the token's item, if it is still what they see.

    ``check_screen=False`` skips the on-screen comparison (an item listed among
    search hits rather than the current item); the store check always applies.
    The item's draft (unsaved note, skip mark) is cleared in the same transaction.
    """
    if check_screen:
        require_on_screen(token, on_screen)
    study = open_study(db, token.study_id, token.annotator, Permission.LABEL)
    was_complete = is_complete(study, token.query_id)
    item = token.model_dump(include={"study_id", "query_id", "unit_id", "annotator"})
    event = labels.record_label(db, **item, gain=gain, note=note, source=source,
                                seen_event=token.seen_event, also=lambda: clear_draft(db, **item))
    resolved = resolve_unit_in_store(study, token.query_id, token.unit_id)
    conflict = resolved.annotators if resolved is not None and resolved.state == "conflict" else None
    others = {a: g for a, g in (conflict or {}).items() if a != token.annotator}
    reopened = was_complete and not is_complete(study, token.query_id)
    return LabelOutcome(event=event, reopened=reopened, in_conflict=conflict is not None,
                        conflict_with=others)

"""The pure rules recall uses for questions about several things, people and times:
``engine.decompose``, ``engine.entities``, ``engine.timerange`` and ``engine.fusion``, on
small fixtures."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.engine import bridges, decompose, entities, fusion, timerange

NOW = datetime(2023, 8, 20, 15, 30, tzinfo=UTC)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


class TestDecompose:
    def test_a_question_about_one_thing_is_asked_whole(self):
        assert decompose.sub_queries("Where does Jon work these days?") == []
        assert decompose.sub_queries("When did Melanie paint a sunrise?") == []

    def test_conjunctions_cut_the_question_into_its_parts(self):
        parts = decompose.sub_queries(
            "What did Mel do the week before her pottery class and after the camping trip?"
        )
        assert parts == ["Mel week", "pottery class", "camping trip"]

    def test_names_joined_by_and_each_take_what_is_asked(self):
        parts = decompose.sub_queries("What do Caroline and Melanie both like to paint?")
        assert parts == ["Caroline like paint", "Melanie like paint"]

    def test_stop_words_leave_the_parts(self):
        assert decompose.content_words("What did she do with her sister?") == ["sister"]

    def test_chinese_connectives_cut_too(self):
        assert decompose.sub_queries("她去露营之前还学了陶艺") == ["她去露营", "还学了陶艺"]

    def test_at_most_three_parts(self):
        parts = decompose.sub_queries(
            "ridge hiking, pottery class, oil painting, chess club and violin lessons"
        )
        assert parts == ["ridge hiking", "pottery class", "oil painting"]

    def test_a_part_too_short_to_ask_alone_joins_its_neighbour(self):
        assert decompose.sub_queries("What did Leo bring back and where did he get it?") == []
        parts = decompose.sub_queries("Which gifts did Nora make, and which cousin came along?")
        assert parts == ["gifts Nora", "cousin came along"]


class TestEntities:
    def test_people_named_by_relation(self):
        assert entities.relations("What did her mentor advise?") == ["mentor"]
        assert entities.relations("Where did Leo's sister move?") == ["sister"]
        assert entities.relations("What does her old friend do?") == ["friend"]
        assert entities.relations("Where did his car break down?") == []

    def test_names_read_next_to_the_relation(self):
        cases = {
            "I met my mentor Gina today.": ["Gina"],
            "My mentor, Lily, loves tea.": ["Lily"],
            "Gina, my mentor, said hi.": ["Gina"],
            "Yesterday Gina is my old mentor again.": ["Gina"],
            "I found a mentor named Bob at work.": ["Bob"],
            "My mentor and I went out.": [],
            "My mentor at work, Nadia, has been guiding me.": ["Nadia"],
            "My old mentor Ruth retired.": ["Ruth"],
            "my mentor from the gym, Sam, says hi": ["Sam"],
        }
        for text, names in cases.items():
            assert entities.aliases(text, "mentor") == names, text
        said = "I adopted a cat last weekend! Her name is Pickle."
        assert entities.aliases(said, "cat") == ["Pickle"]

    def test_a_relation_asked_in_other_words_reads_the_names_said_with_it(self):
        assert entities.relations("Where is their former flatmate moving?") == ["flatmate"]
        assert entities.searched_as("flatmate") == "flatmate roommate housemate"
        assert entities.aliases("My old roommate Aiko got a job.", "flatmate") == ["Aiko"]
        assert entities.aliases("My brother Tom and my sister Ana came.", "sibling") == [
            "Tom", "Ana",
        ]  # fmt: skip

    def test_chinese_relations_and_the_names_said_after_them(self):
        assert entities.relations("的哥哥的狗叫什么名字？") == ["哥哥"]
        assert entities.relations("以前的室友要搬去哪里工作？") == ["室友"]
        assert entities.searched_as("哥哥") == "哥哥 我哥"
        assert entities.searched_as("师父") == "师父"
        assert entities.aliases("我哥马超上个月养了一只柯基。", "哥哥") == ["马超"]
        assert entities.aliases("公司里带我的师父韩雪一直在指导我。", "师父") == ["韩雪"]
        assert entities.aliases("我哥从来不给我打电话。", "哥哥") == []


class TestTimeRange:
    def test_a_month_and_year(self):
        found = timerange.absolute("What did Caroline do in May 2023?", NOW)
        assert found == timerange.Range(day(2023, 5, 1), day(2023, 6, 1))

    def test_a_month_alone_is_its_latest_occurrence(self):
        found = timerange.absolute("Where did they go last October?", NOW)
        assert found == timerange.Range(day(2022, 10, 1), day(2022, 11, 1))
        found = timerange.absolute("What happened in July?", NOW)
        assert found == timerange.Range(day(2023, 7, 1), day(2023, 8, 1))

    def test_may_the_verb_is_no_month(self):
        assert timerange.absolute("What may Caroline pursue?", NOW) is None
        assert timerange.absolute("May she come along?", NOW) is None
        assert timerange.absolute("What happened in May?", NOW) is not None

    def test_relative_to_the_latest_talk(self):
        assert timerange.absolute("What did he cook yesterday?", NOW) == timerange.Range(
            day(2023, 8, 19), day(2023, 8, 20)
        )
        last_week = timerange.absolute("Who called last week?", NOW)
        assert last_week == timerange.Range(day(2023, 8, 6), day(2023, 8, 20))
        ago = timerange.absolute("What did she buy two weeks ago?", NOW)
        assert ago is not None and ago.holds(day(2023, 8, 6)) and not ago.holds(day(2023, 7, 20))

    def test_a_year(self):
        found = timerange.absolute("Which trips did they take in 2022?", NOW)
        assert found == timerange.Range(day(2022, 1, 1), day(2023, 1, 1))

    def test_no_time_named(self):
        assert timerange.absolute("What is Jon's favourite dish?", NOW) is None
        assert timerange.anchored("What is Jon's favourite dish?") is None

    def test_the_week_before_an_event(self):
        anchor = timerange.anchored("What did Mel read the week before the camping trip?")
        assert anchor == timerange.Anchor("the camping trip", 7, -1)
        window = timerange.around(anchor, datetime(2023, 6, 10, 18, 0, tzinfo=UTC))
        assert window == timerange.Range(day(2023, 6, 3), day(2023, 6, 11))
        after = timerange.anchored("Where did he go the day after his birthday?")
        assert after is not None
        assert timerange.around(after, day(2023, 3, 4)) == timerange.Range(
            day(2023, 3, 4), day(2023, 3, 6)
        )


class TestFusion:
    def test_reciprocal_rank_adds_each_list(self):
        scores = fusion.rrf([["a", "b"], ["b", "c"]], k=1)
        assert scores == {"a": 1 / 2, "b": 1 / 3 + 1 / 2, "c": 1 / 3}

    def test_merge_lifts_a_part_best_hit_into_the_top(self):
        primary = [(key, 1.0 - n / 100) for n, key in enumerate("abcdefghijklmnop")]
        merged = [key for key, _ in fusion.merge(primary, [["p", "o"], ["n"]], part_weight=1.0)]
        assert merged.index("p") < merged.index("o")
        assert merged.index("p") < 10 and merged.index("n") < 10
        assert merged.index("a") < 3

    def test_merge_without_parts_keeps_the_primary(self):
        primary = [("a", 0.9), ("b", 0.4)]
        assert fusion.merge(primary, []) == primary

    def test_each_parts_best_hit_is_kept_within_the_first_k(self):
        ranked = [(key, 1.0 - n / 100) for n, key in enumerate("abcdefghijklmnop")]
        kept = fusion.keep_firsts(ranked, [["n", "o"], ["b"], ["p"]], k=5)
        assert [key for key, _ in kept][:6] == ["a", "b", "c", "n", "p", "d"]
        values = [value for _, value in kept]
        assert values == sorted(values, reverse=True) and len(kept) == len(ranked)

    def test_at_most_half_of_the_first_k_go_to_the_parts(self):
        ranked = [(key, 1.0) for key in "abcdef"]
        kept = fusion.keep_firsts(ranked, [["d"], ["e"], ["f"], ["c"]], k=6)
        assert [key for key, _ in kept][:6] == ["a", "b", "c", "d", "e", "f"]
        kept = fusion.keep_firsts(ranked, [["d"], ["e"], ["f"]], k=4)
        assert [key for key, _ in kept][:4] == ["a", "d", "e", "f"]
        assert fusion.keep_firsts(ranked, [["a"]], k=1) == ranked


class TestBridges:
    def test_names_the_first_hits_bring_in(self):
        texts = [
            "My old roommate Aiko got a job with Northwind Freight.",
            "Meet Biscuit! He is a beagle from the rescue.",
            "Aiko says Ziggy ate his shoes on Monday, with Maya.",
        ]
        found = bridges.names(texts, exclude=["Where is their roommate going?", "Maya"], limit=9)
        assert found == ["Aiko", "Northwind Freight", "Meet Biscuit", "Ziggy"]

    def test_a_name_the_question_says_brings_nothing_new(self):
        texts = ["Back from Lisbon with Priya, the food was unreal."]
        assert bridges.names(texts, exclude=["What did Priya eat in Lisbon?"]) == []

    def test_at_most_the_limit(self):
        assert bridges.names(["Ann met Bob, Carl and Dora in June."]) == ["Bob", "Carl"]

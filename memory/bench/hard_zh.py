"""The Chinese stories and small talk of the harder synthetic set (pure data).

The same shapes as :mod:`hard_en` (see :mod:`paraphrase`), for Chinese-speaking players:
the word rule compares CJK character bigrams, as recall's lexical side indexes them, less
:data:`STOPWORDS` (question words, and bigrams holding a particle or a pronoun). Session
dates keep the LoCoMo layout's English form (the reader parses it); answers give dates the
Chinese way.
"""

from __future__ import annotations

import random

from memory.bench.paraphrase import Part, Story

SINGLE, MULTI, TEMPORAL, OPEN = "single-hop", "multi-hop", "temporal", "open-domain"

NAMES = ("林晓雨", "陈浩然", "王思琪", "张子轩", "刘梦洁", "赵一鸣", "孙佳怡", "周明远",
         "吴若曦", "郑宇航", "何静怡", "高俊杰")  # fmt: skip

POOLS: dict[str, tuple[str, ...]] = {
    "person": ("李娜", "杨帆", "许薇", "马超", "韩雪", "唐磊", "冯悦", "曹宁"),
    "city": ("成都", "厦门", "青岛", "昆明", "西安", "大连", "苏州", "桂林", "哈尔滨"),
    "company": ("星河科技", "蓝鲸物流", "青禾医疗", "山海游戏", "云帆能源"),
    "breed": ("柯基", "柴犬", "比格犬", "金毛"),
    "petname": ("豆豆", "团子", "可乐", "馒头", "球球", "年糕"),
    "instrument": ("古筝", "二胡", "大提琴", "尤克里里", "小号"),
    "allergen": ("花生", "芒果", "海鲜", "芝麻"),
    "craft": ("陶艺", "木雕", "书法", "扎染"),
    "item": ("一台咖啡机", "一把人体工学椅", "一件冲锋衣", "一台无人机", "一副降噪耳机"),
    "subject": ("心理学", "会计", "日语", "园林设计"),
    "dish": ("红烧肉", "小笼包", "酸菜鱼", "蛋黄酥"),
    "country": ("泰国", "冰岛", "摩洛哥", "秘鲁", "挪威", "越南"),
    "km": ("十八", "二十一", "二十五"),
    "age": ("四", "五", "六", "七"),
}  # fmt: skip

RELATIVE_DAYS: dict[str, tuple[int, str]] = {
    "昨天": (1, "{date}"),
    "前天": (2, "{date}"),
    "上周": (7, "{date}之前的那一周"),
    "上周末": (7, "{date}之前的那个周末"),
}

STOPWORDS = frozenset(
    """什么 么时 时候 哪里 哪个 哪些 哪儿 多少 怎么 么样 为什 的是 是什 了什 了哪 去了 的那
    那个 这个 一个 我们 你们 他们 她们 自己 了吗 吗？ 的时 候？ 最近 现在 一下 还是 就是
    已经 的 了 吗 呢 吧 么 什 哪 谁 是 在 和 我 你 他 她 它 们 这 那 啥 何 其""".split()
)


def _s(key, parts, asked, paraphrased, answer, distractors, category=SINGLE, time=""):
    return Story(
        key, category, tuple(Part(tuple(s), tuple(c)) for s, c in parts), tuple(asked),
        tuple(paraphrased), answer, tuple(distractors), time,
    )  # fmt: skip


STORIES = (
    _s("relocation", [(["我姐姐{person}周一把房子退了，一个人搬去{city}了。"],
                        ["你家里人都还好吗？"])],
       ["{name}的姐姐搬去哪个城市了？"], ["{name}的手足如今定居在何处？"], "{city}",
       ["我再也不想搬家了，上次搬家累死我了。"]),
    _s("dog", [(["我们从救助站领养了一只{breed}，给它起名叫{petname}。"],
                 ["你那边怎么有狗叫声？"])],
       ["{name}从救助站领养的{breed}叫什么名字？"], ["{name}家新来的小狗唤作啥？"], "{petname}",
       ["楼下邻居的狗昨晚叫了一夜。"]),
    _s("job", [(["{company}给我发录用通知了，下个月就去当分析师！"], ["面试结果出来了吗？"])],
       ["哪家公司给{name}发了录用通知？"], ["{name}即将入职哪个单位？"], "{company}",
       ["我们公司又在招人了，会议更多了。"]),
    _s("instrument", [(["我报了{instrument}课，学得很慢，但是特别喜欢。"],
                        ["你晚上怎么总是在忙？"])],
       ["{name}在学什么乐器？"], ["{name}最近开始摆弄哪样奏乐的家伙？"], "{instrument}",
       ["楼上的小孩在学钢琴，天天练到很晚。"]),
    _s("allergy", [(["医生确认了，我对{allergen}过敏，难怪老是起疹子。"], ["检查结果怎么样？"])],
       ["{name}对什么过敏？"], ["出于健康原因{name}必须避开哪种食物？"], "{allergen}",
       ["春天花粉太多，我的眼睛一直流泪。"]),
    _s("craft", [(["周末去社区中心上了{craft}课，第一件作品歪歪扭扭的。"], ["周末干嘛了？"])],
       ["{name}在社区中心上了什么课？"], ["{name}尝试了哪种手工艺？"], "{craft}",
       ["社区中心又关门装修了。"]),
    _s("purchase", [(["我狠心买了{item}，真的改变了生活。"], ["你最近有犒劳自己吗？"])],
       ["{name}狠心买了什么？"], ["{name}近来赞不绝口的新物件是啥？"], "{item}",
       ["这个月外卖花了太多钱。"]),
    _s("cooking", [(["第三次终于把{dish}做成功了，味道刚刚好。"], ["你厨房里什么这么香？"])],
       ["{name}第三次终于做成功了什么菜？"], ["{name}反复尝试后掌握了哪道菜谱？"], "{dish}",
       ["昨晚的晚饭全烧糊了。"]),
    _s("cuisine", [(["说真的，{dish}我可以天天吃，百吃不厌。"], ["你来的时候想吃点什么？"])],
       ["{name}天天吃都不腻的是什么？"], ["哪道菜是{name}的心头好？"], "{dish}",
       ["新开的那家店菜太咸了。"], OPEN),
    _s("music", [(["我需要专心的时候就弹{instrument}的曲子听，特别安静。"], ["最近在听什么？"])],
       ["{name}需要专心的时候听什么？"], ["哪种乐声能帮{name}集中注意？"], "{instrument}",
       ["咖啡馆放的爵士乐太吵了。"], OPEN),
    _s("half-marathon", [(["我{when}跑完了人生第一个半程马拉松，腿还在酸！"],
                           ["你看起来好累啊。"])],
       ["{name}是什么时候跑的半程马拉松？"], ["{name}哪天完成了长距离赛跑？"], "{date}",
       ["我追公交差点累倒，得锻炼了。"], TEMPORAL, "when"),
    _s("engagement", [(["我们{when}订婚了，他在海边求的婚！"], ["那是戒指吗？！"])],
       ["{name}是什么时候订婚的？"], ["{name}的另一半哪天向其表白终身？"], "{date}",
       ["表妹的婚礼筹备越来越夸张了。"], TEMPORAL, "when"),
    _s("trip-before", [(["为了旅行我买了{item}，万事俱备。"], []),
                       (["我们明天就到{city}了，行李都收拾好了！"],
                         ["{city}的行程都准备好了吗？"])],
       ["去{city}旅行的前一周{name}买了什么？"], ["出远门之前那几天{name}添置了啥？"], "{item}",
       ["又买了太多零食，柜子都塞满了。"], TEMPORAL, "before"),
    _s("course-before", [(["最后一篇{subject}论文交上去了，解放了！"], []),
                         (["毕业照拍完了，学士服也穿上了！"], ["毕业典礼怎么样？"])],
       ["毕业之前{name}交了什么论文？"], ["典礼前不久{name}完成了哪门学科的结业作业？"],
       "最后一篇{subject}论文", ["读书会的读后感我还没写。"], TEMPORAL, "before"),
    _s("mentor", [(["公司里带我的师父{person}一直在指导我准备晋升。"], ["工作怎么样？"]),
                  (["{person}带我去上了一节{craft}课，没想到她这么有艺术细胞。"], [])],
       ["{name}的师父带{name}去上了什么课？"], ["{name}单位里的引路人领着其体验了哪种手艺？"],
       "{craft}", ["大学导师突然给我发邮件了。"], MULTI),
    _s("brother-dog", [(["我哥{person}上个月养了一只{breed}。"], []),
                       (["{person}说{petname}又把他的鞋咬坏了，真是个捣蛋鬼。"], [])],
       ["{name}哥哥的狗叫什么名字？"], ["{name}兄长家的毛孩子唤作啥？"], "{petname}",
       ["我哥从来不给我打电话。"], MULTI),
    _s("friend-job-city", [(["以前的室友{person}进了{company}。"], []),
                           (["{company}把新员工都派到{city}分部去。"], []),
                           (["{person}下个月就要为了新工作搬走了，好远。"], [])],
       ["{name}以前的室友要搬去哪里工作？"], ["{name}昔日同住之人将迁往何处任职？"], "{city}",
       ["为了工作搬家听起来好累。"], MULTI),
    _s("hobbies", [(["周六第一次尝试了{craft}，太好玩了。"], []),
                   (["我加入了一个{instrument}社团，每周四活动。"], []),
                   (["现在坐地铁也在学{subject}，我像换了个人。"], [])],
       ["{name}最近培养了哪些新爱好？"], ["{name}近来开始了哪几样消遣？"],
       "{craft}、{instrument}和{subject}", ["我需要一个新爱好，刷手机不算。"], MULTI),
    _s("countries", [(["刚从{country1}回来，那边的菜太好吃了。"], []),
                     (["在{country2}玩了十天，时差还没倒过来。"], []),
                     (["订了春天去{country3}的便宜机票。"], [])],
       ["{name}今年去了哪些国家？"], ["{name}近来出境到过何处？"],
       "{country1}、{country2}和{country3}", ["我三年没出国了，好想度假。"], MULTI),
)  # fmt: skip

UNANSWERABLE = (
    "{name}的马叫什么名字？",
    "{name}的爷爷在哪所大学教过书？",
    "{name}的帆船是什么颜色的？",
    "{name}在哪里学的潜水？",
    "{name}的鹦鹉叫什么？",
)
NOT_MENTIONED = "对话中没有提到。"


def format_date(when) -> str:
    return f"{when.year}年{when.month}月{when.day}日"


GREETINGS = ("{other}，最近怎么样？", "嗨{other}，好久没聊了！", "{other}！这周过得如何？",
             "早啊{other}，有空聊两句吗？", "{other}，晚上好！今天累不累？")  # fmt: skip
GREETING_REPLIES = ("挺好的，就是忙。你呢？", "还不错，谢谢关心，你那边呢？",
                    "累但是开心。你最近怎么样？", "刚泡好茶，正好聊聊。")  # fmt: skip
GOODBYES = ("好啦，我先去忙了，回头聊！", "保重{other}，下次再聊！", "要做饭了，拜拜！",
            "聊得开心，晚点再说！", "我去睡了，晚安{other}！")  # fmt: skip
REACTIONS = ("哈哈，确实是这样。", "啊，太惨了。", "我也是，真的。", "我太懂你了。",
             "每次遇到这种事都好烦。", "等等，真的假的？", "有道理，换我也一样。")  # fmt: skip
FACT_REACTIONS = ("哇，这是大新闻啊！快跟我说说。", "真的吗？替你高兴，{other}！",
                  "太棒了，你一定很开心吧。", "听起来真不错。", "没想到啊，厉害！",
                  "哦？我之前都不知道。", "记住了，哈哈。")  # fmt: skip
FILLERS = ("这边天气{weather}，一整周都这样。", "周末基本就是{chore}，还有{chore2}。",
           "昨晚做了{dish}，结果{outcome}。", "你看{show}了吗？我一口气看了{n}集。",
           "工作最近{workstate}，领导老是{managerthing}。", "早上一直在{errand}，无聊吧。",
           "今天进城堵车，开了{n}十分钟。", "冰箱终于清理了，里面还有{month}的东西。",
           "手机屏幕又碎了，今年第三次了。", "网断了{n}个小时，只好跟人面对面说话。",
           "我去{place}散了很久的步，脑子清醒多了。",
           "我妈打电话聊了一个小时{topic}。")  # fmt: skip
WORDS = {
    "weather": ("阴雨绵绵", "热得反常", "冷得要命", "风特别大"),
    "chore": ("洗衣服", "打扫卫生", "补觉", "去超市", "交水电费"),
    "dish": ("咖喱", "炒面", "披萨", "一大锅汤"),
    "outcome": ("意外地好吃", "有点糊", "太咸了", "还行吧"),
    "show": ("那个烘焙比赛", "新出的悬疑剧", "那部太空纪录片"),
    "n": ("两", "三", "四", "五"),
    "workstate": ("一团乱", "很慢", "压力很大", "出奇地平静"),
    "managerthing": ("改截止日期", "要报告", "安排开会", "改计划"),
    "errand": ("邮局排队", "等修水管的师傅", "退快递", "银行排队"),
    "month": ("三月", "去年夏天", "过年前"),
    "place": ("河边", "公园", "老铁路"),
    "topic": ("家里的琐事", "她的新手机", "阳台的花"),
}  # fmt: skip


def greeting(rng: random.Random, other: str) -> str:
    return rng.choice(GREETINGS).format(other=other)


def greeting_reply(rng: random.Random, other: str) -> str:
    return rng.choice(GREETING_REPLIES).format(other=other)


def goodbye(rng: random.Random, other: str) -> str:
    return rng.choice(GOODBYES).format(other=other)


def fact_reaction(rng: random.Random, other: str) -> str:
    return rng.choice(FACT_REACTIONS).format(other=other)


def filler(rng: random.Random, other: str) -> tuple[str, str | None]:
    """A small-talk turn (no photo captions in this set): a third are short reactions."""
    if rng.random() < 0.35:
        return rng.choice(REACTIONS), None
    values = {key: rng.choice(options) for key, options in WORDS.items()}
    values["chore"], values["chore2"] = rng.sample(WORDS["chore"], 2)
    return rng.choice(FILLERS).format(other=other, **values), None

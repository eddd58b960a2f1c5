// Scripted answers of the tiny test engine (TINY_ENGINE_SCRIPTS, see triton/testing/tiny_engine.py) for the
// journeys that take the README's pictures: a request whose last user message contains `match` is answered with
// `answer`, streamed byte token by byte token, then stops. Every other question keeps the engine's random text,
// which the other journeys assert on (prompt logs, length limits), so each match is specific to one picture step.
// run.mjs writes this list as JSON into the run directory and passes it to every window's server.
const fence = '```';

/** The questions the picture steps ask (run.mjs asks them by these names). */
export const pictureQuestions = {
  attached: 'What does circle_area return?',
  story: 'Tell me another long story about GPUs.',
  zh: '如何用 Python 计算圆的面积？',
  contrast: 'Which geometry helpers does this module have?',
};

const story = [
  '## The GPU that learned to batch',
  '',
  'Once upon a time a GPU sat in a server room and answered one question at a time. Every answer took the same long walk through all of its memory, and most of its cores waited with nothing to do.',
  '',
  'One night the scheduler had an idea: *why not walk once for everyone?* From then on every decode step carried all the running answers together, and a new question could join at the very next step.',
  '',
  `${fence}python`,
  'while running:',
  '    batch = admit(queue, running)',
  '    logits = model.decode_step(batch)',
  '    for row, token in zip(batch, sample(logits)):',
  '        row.emit(token)',
  fence,
  '',
  '从那以后，显卡不再空等：每一步都同时为所有人生成下一个词。',
  '',
  '### Chapter two',
  '',
  'The queue grew shorter, the fans grew louder, and the developers noticed that their explanations arrived while they were still reading the code. The GPU kept a small notebook of every key and value it had ever computed, so it never had to read a prompt twice.',
  '',
  'Years later the GPU told this story to a younger card. "Batch your work," it said, "and remember what you have already seen." The younger card nodded, and filled its memory with tokens.',
  '',
  '故事讲完了，但这块显卡还在继续工作。它每天为成百上千个问题生成答案，从不抱怨。',
  '',
  'And that is why, to this day, a GPU is happiest when many people ask it things at once.',
].join('\n');
/** The opening of the Python block both circle-area answers show (the sample file's own function). */
const circleAreaBlock = [`${fence}python`, 'import math', '', 'def circle_area(radius):', '    return math.pi * radius ** 2'];

function longExplanation(signature, what) {
  const sentence = `\`${signature}\` starts a function that computes ${what}. It takes plain numbers, returns a float and has no side effects, so it is safe to call from anywhere. `;
  return `${sentence.repeat(2)}它只做计算，不修改任何状态。${sentence}`;
}

/**
 * Journey 17 (inline-completion.png): the completion after "return " in area_of_square. The match ends with the
 * infill prompt's <|code_middle|> (plain text in the prompt), so only a cursor right after "return " gets it.
 */
export const completionScript = { match: 'area_of_square(side):\n    return <|code_middle|>', answer: 'side * side' };

export const scriptedAnswers = [
  completionScript,
  {
    // Journey 5b (chat-panel.png): the question sent with its attachment chips.
    match: pictureQuestions.attached,
    answer: [
      '## `circle_area(radius)`',
      '',
      'It returns the area of a circle with that radius, **π · r²**:',
      '',
      ...circleAreaBlock,
      '',
      'print(circle_area(2))  # 12.566370614359172',
      fence,
      '',
      '`**` binds tighter than `*`, so the radius is squared first. 换句话说：半径为 2 的圆，面积约为 12.57。',
    ].join('\n'),
  },
  // Journeys 5 and 6b (explain-selection.png, server-status.png): the explain prompt fences the selected line.
  {
    match: `${fence}python\n    return math.pi * radius ** 2`,
    answer: 'Returns the **area of a circle**, π · r². `radius ** 2` is evaluated before the multiplication, so only the radius is squared. 返回圆的面积。',
  },
  {
    match: `${fence}python\n    return math.sqrt(a * a + b * b)`,
    answer: 'The **hypotenuse** of a right triangle (Pythagoras). `math.hypot(a, b)` computes the same and avoids overflow for very large sides. 即勾股定理求斜边。',
  },
  {
    match: `${fence}python\n    return sum(values) / len(values)`,
    answer: 'The **arithmetic mean** of `values`. Risky: an empty list raises `ZeroDivisionError`; `statistics.mean` fails with a clearer message. 注意：空列表会出错。',
  },
  // Journey 6b (server-status.png): the load beside the running answer, explanations of the three `def` lines,
  // long enough to still run when the picture is taken. The selection is the whole line with its line break, so the
  // fence closes after an empty line (5b's attachments hold these lines too, but never followed by an empty line).
  ...[['circle_area(radius)', 'the area of a circle'], ['hypotenuse(a, b)', 'the hypotenuse of a right triangle'], ['mean(values)', 'the arithmetic mean']]
    .map(([signature, what]) => ({ match: `def ${signature}:\n\n${fence}`, answer: longExplanation(signature, what) })),
  // Journey 6b (server-status.png): longer than its 2,048-token limit, so it is still streaming when Stop is pressed.
  { match: pictureQuestions.story, answer: `${story}\n\n${story.replace('## The GPU that learned to batch', '## The story, once more')}` },
  // Journey 9 (zh-cn-chat-panel.png).
  {
    match: pictureQuestions.zh,
    answer: [
      '## 计算圆的面积',
      '',
      '圆的面积公式是 **S = πr²**。在 Python 中可以这样写：',
      '',
      ...circleAreaBlock,
      fence,
      '',
      '例如 `circle_area(2)` 返回约 `12.57`。注意半径不能为负数。',
    ].join('\n'),
  },
  // Journey 11 (chat-high-contrast.png): every element an answer can have, in a high-contrast theme.
  {
    match: pictureQuestions.contrast,
    answer: [
      '## Geometry helpers',
      '',
      'The module defines three functions; each takes plain numbers (see the [math docs](https://docs.python.org/3/library/math.html)):',
      '',
      '| Function | Dependencies | Returns |',
      '|---|---|---|',
      '| `circle_area(radius)` | `math.pi` | the area |',
      '| `hypotenuse(a, b)` | `math.sqrt` | the long side |',
      '| `mean(values)` | none | the average |',
      '',
      '- `mean([])` raises **ZeroDivisionError**',
      '- negative radii are not checked',
      '',
      `${fence}python`,
      'print(circle_area(2))  # 12.566370614359172',
      fence,
    ].join('\n'),
  },
];

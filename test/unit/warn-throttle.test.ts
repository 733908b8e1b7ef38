// A flood of refused requests is a few log lines, with the count of the quiet ones.
import { expect } from 'chai';
import { WarnThrottle } from '../../src/core/warn-throttle.js';
import { CapturingLogger } from '../support/capturing-logger.js';

describe('WarnThrottle', () => {
  it('logs one warning a reason per interval, then says how many it kept quiet', () => {
    const logger = new CapturingLogger();
    let now = 0;
    const throttle = new WarnThrottle(logger, () => now, 10_000);
    for (let i = 0; i < 1_000; i++) throttle.warn('missing', { i }, 'refused');
    throttle.warn('stranger', {}, 'stranger refused');
    expect(logger.at('warn').map((r) => r.msg)).to.deep.equal(['refused', 'stranger refused']);
    now = 9_999;
    throttle.warn('missing', { i: 'late' }, 'refused');
    expect(logger.at('warn')).to.have.length(2);
    now = 10_000;
    throttle.warn('missing', { i: 'next' }, 'refused');
    const last = logger.at('warn').at(-1);
    expect(last?.fields).to.deep.include({ i: 'next', suppressed: 1000 });
  });
});

import { walkEveryScreen } from './axe-every-screen.ts'

/** Every portal screen in Chromium, the second half of the walk (test/browser/axe-every-screen.ts says what each is checked for). */
walkEveryScreen('second')
